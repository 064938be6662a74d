// mirror_latency: how long from an Ingest that changes a preference to the
// pinned prefs entry changing. It starts schedcached and `schedcache
// mirror` as processes, then, one process at a time, ingests the two ticks
// that give a new process a preferred LLC and polls the pinned map from
// userspace (bpf_map_lookup_elem in a loop) until the entry appears.
// Prints one JSON line: count, median, p99 and max in microseconds.
//
// Needs root and a bpffs: run it in a private mount namespace, e.g.
//   mkdir -p /tmp/scbpf && unshare -m --propagation private sh -c
//     'mount -t bpf bpf /tmp/scbpf && build/bin/mirror_latency
//        --pin_dir=/tmp/scbpf/bench --bin_dir=build/bin'
// (docs/PERFORMANCE.md has the figure).
#include <bpf/bpf.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/server_process.h"
#include "common/status_macros.h"
#include "bpfmaps/pinned_maps.h"
#include "bpfmaps/schedcache_maps.h"
#include "schedcache/client.h"

ABSL_FLAG(std::string, bin_dir, "build/bin",
          "folder of schedcached and schedcache");
ABSL_FLAG(std::string, pin_dir, "", "bpffs directory for the maps (required)");
ABSL_FLAG(int, changes, 1000, "preference changes to time");
ABSL_FLAG(double, timeout_seconds, 10, "longest wait for one change");

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr char kSession[] = "bench";
// Two LLCs of two CPUs: the smallest topology where the cache-aware
// policies are on.
constexpr char kTopology[] = "synthetic:pack:1 l3:2 core:2 pu:1";

// ChangeSamples gives process `tgid` (2 threads) LLC 0 as its preference:
// a tick at t0 and one 20 ms (two epochs) later, which scans and finds
// runtime on CPU 0 only (tests/server_fixture.h PreferLlc0Events derives
// it). Each process has its own t0, so the session's clock only advances.
std::vector<Sample> ChangeSamples(int32_t tgid, int64_t t0) {
  std::vector<Sample> ticks(2);
  for (int i = 0; i < 2; ++i) {
    ticks[i].timestamp_ns = t0 + i * 20 * kMs;
    ticks[i].cpu = 0;
    ticks[i].tgid = tgid;
    ticks[i].tid = tgid;
    ticks[i].delta_ns = kMs;
    ticks[i].tick = true;
  }
  ticks[0].nr_threads = 2;
  return ticks;
}

// MirrorProcess is `schedcache mirror` as a child, its stdout on a pipe.
class MirrorProcess {
 public:
  static absl::StatusOr<std::unique_ptr<MirrorProcess>> Start(
      std::vector<std::string> argv) {
    int fds[2];
    if (pipe(fds) != 0) return absl::ErrnoToStatus(errno, "pipe");
    const pid_t pid = fork();
    if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> args;
      for (std::string& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    return std::unique_ptr<MirrorProcess>(
        new MirrorProcess(pid, fdopen(fds[0], "r")));
  }
  ~MirrorProcess() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    std::fclose(out_);
  }

  // WaitForLine reads stdout until a line contains `text`; false at EOF.
  bool WaitForLine(absl::string_view text) {
    char* line = nullptr;
    size_t capacity = 0;
    bool found = false;
    while (!found && getline(&line, &capacity, out_) >= 0) {
      found = absl::StrContains(line, text);
    }
    std::free(line);
    return found;
  }

 private:
  MirrorProcess(pid_t pid, FILE* out) : pid_(pid), out_(out) {}
  pid_t pid_;
  FILE* out_;
};

absl::Status CreateSession(const client::Client& client) {
  v1::CreateSessionRequest request;
  request.set_name(kSession);
  request.mutable_topology()->set_spec(kTopology);
  request.add_policies("visited-scan");
  return client.CreateSession(request).status();
}

// WaitForEntry polls `prefs` until `tgid` has an entry; DeadlineExceeded
// after `timeout`.
absl::Status WaitForEntry(int prefs, uint32_t tgid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  schedcache_pref value{};
  while (bpf_map_lookup_elem(prefs, &tgid, &value) != 0) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tgid ", tgid, ": no prefs entry after ",
                       absl::FormatDuration(timeout)));
    }
  }
  return absl::OkStatus();
}

double PercentileUs(std::vector<double>& sorted_us, double fraction) {
  const size_t index = std::min(
      sorted_us.size() - 1,
      static_cast<size_t>(fraction * static_cast<double>(sorted_us.size())));
  return sorted_us[index];
}

absl::Status Run() {
  const std::string bin = absl::GetFlag(FLAGS_bin_dir) + "/";
  const std::string pin_dir = absl::GetFlag(FLAGS_pin_dir);
  const int changes = absl::GetFlag(FLAGS_changes);
  if (pin_dir.empty() || changes <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pin_dir is required and --changes must be > 0 (is ", changes, ")"));
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<ServerProcess> server,
      ServerProcess::Start(bin + "schedcached", {}, absl::Seconds(10)));
  client::Options options;
  options.address = server->address();
  const std::unique_ptr<client::Client> client =
      client::Client::Connect(options);
  RETURN_IF_ERROR(CreateSession(*client));
  ASSIGN_OR_RETURN(std::unique_ptr<MirrorProcess> mirror,
                   MirrorProcess::Start({bin + "schedcache", "mirror",
                                         "--server", server->address(),
                                         "--session", kSession, "--pin-dir",
                                         pin_dir}));
  // The mirror prints "following changes" once its watch is attached.
  if (!mirror->WaitForLine("following changes")) {
    return absl::InternalError("the mirror ended before following changes");
  }
  const MapFd prefs(bpf_obj_get((pin_dir + "/prefs").c_str()));
  if (prefs.get() < 0) {
    return BpfError(errno, "BPF_OBJ_GET", pin_dir + "/prefs");
  }

  std::unique_ptr<client::IngestWriter> writer = client->StartIngest(kSession);
  const absl::Duration timeout =
      absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  std::vector<double> latency_us;
  latency_us.reserve(changes);
  for (int i = 0; i < changes; ++i) {
    const int32_t tgid = 100'000 + i;
    for (const Sample& sample : ChangeSamples(tgid, int64_t{i} * 100 * kMs)) {
      RETURN_IF_ERROR(writer->Add(sample));
    }
    const absl::Time start = absl::Now();
    RETURN_IF_ERROR(writer->Flush());
    RETURN_IF_ERROR(WaitForEntry(prefs.get(), static_cast<uint32_t>(tgid),
                                 timeout));
    latency_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
  }
  RETURN_IF_ERROR(writer->Finish().status());
  mirror.reset();  // SIGTERM, and wait for it
  std::sort(latency_us.begin(), latency_us.end());
  std::printf(
      "{\"tool\":\"mirror_latency\",\"changes\":%d,\"median_us\":%.1f,"
      "\"p99_us\":%.1f,\"max_us\":%.1f}\n",
      changes, PercentileUs(latency_us, 0.5), PercentileUs(latency_us, 0.99),
      latency_us.back());
  return server->Stop();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "mirror_latency --pin_dir=BPFFS_DIR [--bin_dir=build/bin] "
      "[--changes=1000]: Ingest-to-map latency of schedcache mirror");
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = schedcache::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "mirror_latency: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
