// schedcached: the schedcache server. Flags are absl flags (`--help`);
// everything else is schedcache::Server.
#include <malloc.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/flags_usage.h"
#include "common/service_defaults.h"
#include "common/status_macros.h"
#include "server/metrics_endpoint.h"
#include "server/server.h"
#include "server/signal_waiter.h"
#include "server/state_dir.h"
#include "server/tls_credentials.h"
#include "server/unix_socket_claim.h"

ABSL_FLAG(std::vector<std::string>, listen, {},
          "Where to listen: unix:PATH, HOST:PORT, or :PORT (loopback); TCP "
          "only when asked. Repeatable, or comma-separated. Default: "
          "unix:/run/schedcache/schedcached.sock");
ABSL_FLAG(std::vector<std::string>, read_only_listen, {},
          "Where to listen for reading only (same forms as --listen): "
          "GetTopology, ListPolicies, GetSession, ListSessions, Recommend "
          "without scan, WatchPreferences and GetReport; every other call "
          "is PERMISSION_DENIED. Repeatable, or comma-separated");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate chain: every TCP listener serves TLS with it "
          "(needs --tls_key_file). Re-read, with the key, on SIGHUP");
ABSL_FLAG(std::string, tls_key_file, "",
          "PEM private key (unencrypted) of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA certificates: given, TCP clients must present a "
          "certificate it signed (mutual TLS). Re-read on SIGHUP");
ABSL_FLAG(bool, allow_insecure_tcp, false,
          "Serve plain TCP (no TLS) on a non-loopback address; without it "
          "such a listener is refused at start");
ABSL_FLAG(std::string, socket_mode, "0600",
          "Mode of every Unix socket, octal (0600: the server's user only; "
          "0660: its group too)");
ABSL_FLAG(std::string, socket_group, "",
          "Group (name or gid) of every Unix socket; empty: the server's");
ABSL_FLAG(std::string, metrics_listen, "",
          "Serve Prometheus metrics over HTTP at http://ADDR/metrics: PORT "
          "or :PORT (127.0.0.1), or HOST:PORT (IPv4 or a host name; plain "
          "HTTP, no authentication). Empty: no metrics");
ABSL_FLAG(std::string, topology, "host",
          "Topology of the `default` session: host, "
          "synthetic:HWLOC_SYNTHETIC_STRING or xml:PATH");
ABSL_FLAG(std::vector<std::string>, default_policies,
          absl::StrSplit(schedcache::kDefaultPolicies, ','),
          "Policies of the `default` session, comma-separated; the first is "
          "the reference");
ABSL_FLAG(std::vector<std::string>, policy_plugin, {},
          "Policy plugin (.so) to load; repeatable, or comma-separated");
ABSL_FLAG(int, max_sessions, schedcache::Limits{}.max_sessions,
          "Most sessions alive at once, `default` included (>= 1)");
ABSL_FLAG(int64_t, max_processes, schedcache::Limits{}.max_processes,
          "Most processes tracked per session; the least recently sampled is "
          "evicted (and counted) beyond it (>= 1)");
ABSL_FLAG(int, max_batch_events, schedcache::Limits{}.max_batch_events,
          "Most events in one Ingest batch (>= 1)");
ABSL_FLAG(int, max_message_bytes, schedcache::Limits{}.max_message_bytes,
          "Largest request message, bytes (>= 1)");
ABSL_FLAG(int, max_streams, schedcache::Limits{}.max_streams,
          "Most Ingest streams open at once (>= 1)");
ABSL_FLAG(int, max_watch_streams, schedcache::Limits{}.max_watch_streams,
          "Most WatchPreferences streams open at once, counted apart from "
          "Ingest's (>= 1)");
ABSL_FLAG(int, max_watch_queue, schedcache::Limits{}.max_watch_queue,
          "Preference changes buffered per watcher before they are dropped "
          "(and counted as missed) (>= 1)");
ABSL_FLAG(int, watch_history, schedcache::Limits{}.watch_history,
          "Latest preference changes each session retains for "
          "WatchPreferences resumes; a resume from further back gets a "
          "snapshot (>= 0)");
ABSL_FLAG(int64_t, max_topology_cpus, schedcache::Limits{}.max_topology_cpus,
          "Most CPUs a synthetic or XML topology may describe, for a "
          "session or --topology; checked before hwloc builds it (>= 1)");
ABSL_FLAG(std::string, state_dir, "",
          "Directory where named sessions' definitions (topology, policies, "
          "tunables, trigger) are stored, one file each, and recreated from "
          "at start (model state starts empty). Created (0700) when missing; "
          "not writable: exit 2. Empty: sessions end with the process");
ABSL_FLAG(double, shutdown_grace_seconds, 2.0,
          "On SIGTERM/SIGINT, how long calls in flight may take before they "
          "are cancelled (>= 0)");

namespace {

// Flatten splits comma-separated values of repeated flags.
std::vector<std::string> Flatten(const std::vector<std::string>& values) {
  std::vector<std::string> flat;
  for (const std::string& value : values) {
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      flat.emplace_back(part);
    }
  }
  return flat;
}

// NormalizeArgs lets flag names be spelled with '-' or '_' (absl flag names
// are identifiers) and makes --listen, --read_only_listen and
// --policy_plugin repeatable: absl
// keeps only the last occurrence of a flag, so every occurrence is folded
// into one comma-separated value.
std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  const std::vector<std::string> repeatable = {"listen", "read_only_listen",
                                               "policy_plugin"};
  std::vector<std::string> args = {argv[0]};
  std::vector<std::vector<std::string>> repeated(repeatable.size());
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      args.insert(args.end(), argv + i, argv + argc);
      break;
    }
    if (arg.rfind("--", 0) != 0) {
      args.push_back(arg);
      continue;
    }
    const size_t equals = arg.find('=');
    std::string name = arg.substr(2, equals == std::string::npos
                                         ? std::string::npos
                                         : equals - 2);
    std::replace(name.begin(), name.end(), '-', '_');
    const auto it = std::find(repeatable.begin(), repeatable.end(), name);
    if (it == repeatable.end()) {
      args.push_back("--" + name +
                     (equals == std::string::npos ? "" : arg.substr(equals)));
      continue;
    }
    std::vector<std::string>& values = repeated[it - repeatable.begin()];
    if (equals != std::string::npos) {
      values.push_back(arg.substr(equals + 1));
    } else if (i + 1 < argc) {
      values.push_back(argv[++i]);
    }
  }
  for (size_t i = 0; i < repeatable.size(); ++i) {
    if (!repeated[i].empty()) {
      args.push_back("--" + repeatable[i] + "=" +
                     absl::StrJoin(repeated[i], ","));
    }
  }
  return args;
}

// AtLeast returns an error naming `flag` when `value` is below `low`.
template <typename T>
absl::Status AtLeast(absl::string_view flag, T value, T low) {
  if (value >= low) return absl::OkStatus();
  std::string range = absl::StrCat("at least ", low);
  if constexpr (std::is_integral_v<T>) {
    range = absl::StrCat(low, "..", std::numeric_limits<T>::max());
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--", flag, "=", value, " is out of range: must be ", range));
}

// ValidateFlags checks every limit flag at start-up, so a nonsense value
// fails here and names its flag instead of misbehaving later.
absl::Status ValidateFlags() {
  for (const absl::Status& status : {
           AtLeast("max_sessions", absl::GetFlag(FLAGS_max_sessions), 1),
           AtLeast<int64_t>("max_processes", absl::GetFlag(FLAGS_max_processes),
                            1),
           AtLeast("max_batch_events", absl::GetFlag(FLAGS_max_batch_events),
                   1),
           AtLeast("max_message_bytes", absl::GetFlag(FLAGS_max_message_bytes),
                   1),
           AtLeast("max_streams", absl::GetFlag(FLAGS_max_streams), 1),
           AtLeast("max_watch_streams", absl::GetFlag(FLAGS_max_watch_streams),
                   1),
           AtLeast<int64_t>("max_topology_cpus",
                            absl::GetFlag(FLAGS_max_topology_cpus), 1),
           AtLeast("max_watch_queue", absl::GetFlag(FLAGS_max_watch_queue), 1),
           AtLeast("watch_history", absl::GetFlag(FLAGS_watch_history), 0),
           AtLeast("shutdown_grace_seconds",
                   absl::GetFlag(FLAGS_shutdown_grace_seconds), 0.0),
       }) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// OptionsFromFlags reads the server's options; an error (exit 2) names the
// flag and its value: TLS files are read and checked here, and a plain TCP
// listener off loopback is refused, before anything is started.
absl::StatusOr<schedcache::ServerOptions> OptionsFromFlags() {
  schedcache::ServerOptions options;
  if (std::vector<std::string> listen = Flatten(absl::GetFlag(FLAGS_listen));
      !listen.empty()) {
    options.listen = std::move(listen);
  }
  options.read_only_listen = Flatten(absl::GetFlag(FLAGS_read_only_listen));
  schedcache::TlsFiles tls{absl::GetFlag(FLAGS_tls_cert_file),
                           absl::GetFlag(FLAGS_tls_key_file),
                           absl::GetFlag(FLAGS_tls_client_ca_file)};
  if (tls.enabled()) {
    ASSIGN_OR_RETURN(options.tls,
                     schedcache::TlsCredentials::Create(std::move(tls)));
  }
  options.allow_insecure_tcp = absl::GetFlag(FLAGS_allow_insecure_tcp);
  ASSIGN_OR_RETURN(
      options.socket_access,
      schedcache::ParseSocketAccess(absl::GetFlag(FLAGS_socket_mode),
                                    absl::GetFlag(FLAGS_socket_group)));
  RETURN_IF_ERROR(schedcache::Server::CheckTransportSecurity(options));
  if (const std::string metrics = absl::GetFlag(FLAGS_metrics_listen);
      !metrics.empty()) {
    ASSIGN_OR_RETURN(options.metrics_listen,
                     schedcache::ParseMetricsAddress(metrics));
  }
  if (std::string state_dir = absl::GetFlag(FLAGS_state_dir);
      !state_dir.empty()) {
    absl::StatusOr<std::unique_ptr<schedcache::StateDir>> opened =
        schedcache::StateDir::Open(std::move(state_dir));
    if (!opened.ok()) {
      return absl::Status(opened.status().code(),
                          absl::StrCat("--state_dir: ",
                                       opened.status().message()));
    }
    options.state_dir = *std::move(opened);
  }
  options.default_topology = absl::GetFlag(FLAGS_topology);
  options.default_policies = Flatten(absl::GetFlag(FLAGS_default_policies));
  options.policy_plugins = Flatten(absl::GetFlag(FLAGS_policy_plugin));
  options.limits.max_sessions = absl::GetFlag(FLAGS_max_sessions);
  options.limits.max_processes = absl::GetFlag(FLAGS_max_processes);
  options.limits.max_batch_events = absl::GetFlag(FLAGS_max_batch_events);
  options.limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.limits.max_streams = absl::GetFlag(FLAGS_max_streams);
  options.limits.max_watch_streams = absl::GetFlag(FLAGS_max_watch_streams);
  options.limits.max_topology_cpus = absl::GetFlag(FLAGS_max_topology_cpus);
  options.limits.max_watch_queue = absl::GetFlag(FLAGS_max_watch_queue);
  options.limits.watch_history = absl::GetFlag(FLAGS_watch_history);
  return options;
}

// ServeUntilStopped reloads `tls` (when given) on each SIGHUP and returns
// the SIGTERM or SIGINT that ends the server. A reload that fails keeps the
// certificates served so far.
int ServeUntilStopped(schedcache::TlsCredentials* tls) {
  while (true) {
    const int signal = schedcache::WaitForServerSignal();
    if (signal != SIGHUP) return signal;
    if (tls == nullptr) {
      std::cerr << "schedcached: SIGHUP: no TLS flags given, nothing to "
                   "reload\n";
    } else if (const absl::Status reloaded = tls->Reload(); !reloaded.ok()) {
      std::cerr << "schedcached: SIGHUP: keeping the served certificates: "
                << reloaded.message() << "\n";
    } else {
      std::cerr << "schedcached: SIGHUP: certificates reloaded\n";
    }
  }
}

// KeepFreedMemoryForReuse raises glibc's trim threshold from its 128 KiB
// default to 16 MiB. gRPC's reading threads allocate and free each
// batch's buffers in their own malloc arenas; at the default, the free
// hands the arena's top back to the kernel (madvise) and the next
// socket read into it faults every page in afresh: 6.5 page faults per
// 1000 samples ingested, about 0.5 with this (docs/PERFORMANCE.md,
// "Performance: server, second round"). At most 16 MiB per arena stays resident unused.
void KeepFreedMemoryForReuse() {
  constexpr int kTrimThresholdBytes = 16 << 20;
  mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
}

}  // namespace

int main(int argc, char** argv) {
  KeepFreedMemoryForReuse();
  schedcache::SetFlagsUsage(
      "the schedcache server: runs Linux's cache-aware scheduling model "
      "(CONFIG_SCHED_CACHE) over runtime samples sent by gRPC clients.\n"
      "Usage: schedcached [--listen=unix:PATH|HOST:PORT ...] "
      "[--read-only-listen=ADDR ...] [--tls-cert-file=PEM --tls-key-file=PEM "
      "[--tls-client-ca-file=PEM]] [--metrics-listen=ADDR] "
      "[--topology=SOURCE] [--state-dir=DIR] "
      "[--policy-plugin=PATH ...]\n"
      "Flag names may use '-' or '_'. Limit flags must be at least 1 "
      "(--shutdown_grace_seconds at least 0); a value out of range, an "
      "unreadable or mismatched TLS file, a plain TCP listener off loopback "
      "without --allow_insecure_tcp, a --state_dir that cannot be created or "
      "written, or a stray argument exits with code 2. "
      "SIGHUP re-reads the TLS files; SIGTERM/SIGINT drain and stop.",
      "server/main.cc");
  std::vector<std::string> normalized = NormalizeArgs(argc, argv);
  std::vector<char*> args;
  for (std::string& arg : normalized) args.push_back(arg.data());
  const std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  // Exit code 2, as the schedcache CLI for usage errors: the command line
  // is wrong (the server could not start with it).
  if (positional.size() > 1) {
    std::cerr << "schedcached: unexpected argument \"" << positional[1]
              << "\" (schedcached takes only flags; see --help)\n";
    return 2;
  }
  if (const absl::Status valid = ValidateFlags(); !valid.ok()) {
    std::cerr << "schedcached: " << valid.message() << "\n";
    return 2;
  }
  schedcache::BlockServerSignals();

  absl::StatusOr<schedcache::ServerOptions> options = OptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "schedcached: " << options.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<schedcache::Server>> server =
      schedcache::Server::Start(*options);
  if (!server.ok()) {
    std::cerr << "schedcached: " << server.status() << "\n";
    return 1;
  }
  std::cerr << "schedcached: listening on "
            << absl::StrJoin((*server)->addresses(), ", ") << "\n";
  if (!(*server)->read_only_addresses().empty()) {
    std::cerr << "schedcached: listening read-only on "
              << absl::StrJoin((*server)->read_only_addresses(), ", ") << "\n";
  }
  if (const std::string& metrics = (*server)->metrics_address();
      !metrics.empty()) {
    std::cerr << "schedcached: metrics on http://" << metrics << "/metrics\n";
  }
  std::cerr << "schedcached: host topology: "
            << (*server)->host_topology().Summary() << "\n"
            << "schedcached: session default: "
            << (*server)->default_topology().source() << ": "
            << (*server)->default_topology().Summary() << "\n";

  const int signal = ServeUntilStopped(options->tls.get());
  std::cerr << "schedcached: " << strsignal(signal) << ", stopping\n";
  const int builds_running = (*server)->Stop(
      absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  if (builds_running > 0) {
    // hwloc cannot be interrupted: those threads are still building (for
    // minutes, maybe) sessions nobody will get. Exit now, without the static
    // destructors that would run under them.
    std::cerr << "schedcached: abandoning " << builds_running
              << " session build(s) in progress\n";
    options->tls.reset();  // removes the private copies of the TLS files
    std::_Exit(0);
  }
  return 0;
}
