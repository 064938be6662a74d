#include "scx/scx_cli.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/flag_set.h"
#include "cli/stop_signals.h"
#include "common/service_defaults.h"

namespace schedcache {
namespace {

constexpr char kUsage[] =
    "usage: schedcache-scx [--pin-dir DIR | --session NAME] [--stats]\n"
    "\n"
    "Registers schedcache's sched_ext scheduler, which places each task by\n"
    "its process's preferred LLC in the pinned maps `schedcache mirror`\n"
    "keeps (prefs, llcs, meta under DIR; the maps themselves, never a\n"
    "copy), and the others by their previous CPU's LLC. Runs until SIGINT\n"
    "or SIGTERM, then unregisters (tasks return to the fair class) and\n"
    "prints one JSON object on stdout: placed_preferred, fallbacks by\n"
    "reason, steals, pref_latency_ns {count, p50, p99}.\n"
    "Needs root, a kernel with sched_ext (CONFIG_SCHED_CLASS_EXT) and no\n"
    "other sched_ext scheduler running; exit 1 saying which is missing.\n"
    "\n"
    "flags:\n";

constexpr absl::Duration kPollPeriod = absl::Milliseconds(100);
constexpr absl::Duration kStatsPeriod = absl::Seconds(1);

}  // namespace

int RunScxCli(const std::vector<std::string>& args, const ScxOptions& base,
              std::ostream& out, std::ostream& err) {
  ScxOptions options = base;
  std::string session = kDefaultSessionName;
  bool stats = false;
  bool help = false;
  cli::FlagSet flags;
  flags.AddString("--pin-dir", "DIR",
                  "bpffs directory of the maps, as `schedcache mirror "
                  "--pin-dir` (default /sys/fs/bpf/schedcache/SESSION)",
                  &options.pin_dir);
  flags.AddString("--session", "NAME",
                  "session of the default --pin-dir, as mirror's --session",
                  &session);
  flags.AddBool("--stats", "print the counters on stderr every second",
                &stats);
  flags.AddBool("--help", "print this help", &help);
  const absl::StatusOr<std::vector<std::string>> positional = flags.Parse(args);
  if (!positional.ok() || !positional->empty()) {
    err << "schedcache-scx: "
        << (positional.ok()
                ? absl::StrCat("unexpected argument ", positional->front())
                : std::string(positional.status().message()))
        << "\n" << kUsage << flags.Help();
    return 2;
  }
  if (help) {
    out << kUsage << flags.Help();
    return 0;
  }
  if (options.pin_dir.empty()) {
    options.pin_dir = absl::StrCat(kScxDefaultPinRoot, session);
  }

  cli::StopSignals signals;
  std::atomic<bool> stopping{false};
  signals.Watch([&stopping] { stopping = true; });
  absl::StatusOr<std::unique_ptr<ScxScheduler>> scheduler =
      ScxScheduler::Start(options);
  if (!scheduler.ok()) {
    err << "schedcache-scx: " << scheduler.status().message() << "\n";
    return 1;
  }
  err << "schedcache-scx: scheduler \"" << SCHEDCACHE_SCX_NAME
      << "\" registered on " << (*scheduler)->nr_cpus() << " CPUs, "
      << (*scheduler)->nr_llcs() << " LLCs; maps of " << options.pin_dir
      << " (policy " << (*scheduler)->policy() << ")" << std::endl;

  absl::Status status = absl::OkStatus();
  absl::Time next_stats = absl::Now() + kStatsPeriod;
  while (!stopping && status.ok()) {
    absl::SleepFor(kPollPeriod);
    status = (*scheduler)->Poll();
    if (stats && absl::Now() >= next_stats) {
      next_stats += kStatsPeriod;
      const absl::StatusOr<ScxCounters> counters = (*scheduler)->Counters();
      if (counters.ok()) err << "schedcache-scx: " << StatsLine(*counters) << std::endl;
    }
  }
  signals.Disarm();
  (*scheduler)->Stop();
  if (status.ok()) status = (*scheduler)->Poll();  // the last records
  const absl::StatusOr<ScxCounters> counters = (*scheduler)->Counters();
  if (!counters.ok()) {
    err << "schedcache-scx: " << counters.status().message() << "\n";
    return 1;
  }
  out << SummaryJson(*counters, (*scheduler)->latencies().Summarize()) << "\n"
      << std::flush;
  if (!status.ok()) {
    err << "schedcache-scx: " << status.message() << "\n";
    return 1;
  }
  err << "schedcache-scx: unregistered" << std::endl;
  return 0;
}

}  // namespace schedcache
