// RunAb: one A/B evaluation (`schedcache ab`, docs/EVALUATION.md). It reads one
// input (a scheduler trace, a sample CSV, or a generated workload), feeds
// its events to one session that runs every policy, and assembles the
// AbResult (ab_result.h), which ab_report.h turns into the report.
//
// Workload inputs close a loop: the generator places threads on their
// process's preferred LLC, as the simulated machine's own (cache-aware)
// scheduler would. That preference comes from a local reference engine
// running the first policy only, fed the same events, never from the
// evaluated session, so the generated events (and every policy's results)
// are the same whichever backend runs the session. All policies of the
// session see exactly those events.
//
// Thread contract: RunAb runs on the calling thread, which also receives
// the progress callbacks, and with AbOptions::jobs >= 2 on one more thread
// of its own that applies the events to the session (the session's
// observer, the collector, is called there).
#ifndef SCHEDCACHE_EVAL_AB_AB_RUNNER_H_
#define SCHEDCACHE_EVAL_AB_AB_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/model_defaults.h"
#include "eval/ab/ab_result.h"
#include "eval/ab/ab_session.h"
#include "eval/ab/cache_groups.h"
#include "eval/workload/workload.h"
#include "events/event.h"
#include "policies/policy_registry.h"
#include "topology/topology.h"
#include "topology/topology_source.h"
#include "trace/cpu_map.h"

namespace schedcache::ab {

// AbInputSpec is the parsed --input.
struct AbInputSpec {
  enum class Kind { kTrace, kCsv, kWorkload };
  Kind kind = Kind::kWorkload;
  std::string path;  // trace, csv ("-": standard input)
  WorkloadKind workload = WorkloadKind::kRedis;
};

// ParseAbInput reads "trace:PATH", "csv:PATH", "workload:redis",
// "workload:valkey" or "workload:hackbench". Returns InvalidArgument naming
// the text.
absl::StatusOr<AbInputSpec> ParseAbInput(absl::string_view text);

// AbProgress says how far an evaluation has got.
struct AbProgress {
  int64_t events = 0;    // samples and hand-overs fed so far
  int64_t input_ns = 0;  // input time covered, from its first event
};

struct AbOptions {
  AbInputSpec input;
  // Generator options for workload inputs (kind comes from `input`;
  // numa_preferred_node is turned on when the session's numa_balancing is).
  WorkloadOptions workload;
  client::SessionSpec session{.topology = std::string(kEpyc9654Shape),
                          .policies = {"full-scan", "visited-scan", "none"},
                          .trigger = "tick",
                          .settings = {}};
  int hz = kDefaultHz;  // tick rate for traces and workloads
  // kernel_clock is a capture's clock header (docs/MODEL.md, "Time in
  // jiffies"): RunAb sets the model's hz, epoch_period_jiffies and clock
  // and epoch anchors from it, each unless the settings name it already,
  // so the replay's ticks and the model's epochs fall where the recording
  // kernel's did. Unset, a trace input's own header (ReadKernelClock) is
  // used.
  std::optional<KernelClock> kernel_clock;
  CpuMap cpu_map;              // trace and csv inputs only; see cpu_map.h
  std::string scan_trace;      // --scan-trace FILE; empty: none
  std::string perfetto;        // --perfetto FILE; empty: none
  // last_scans: the busiest process's last scans are wanted (--html's
  // topology view); from a server, the A/B then watches every scan.
  bool last_scans = false;
  // group_by sets each sample's cache group before the session sees it
  // (cache_groups.h); the tgid rule, the default, changes nothing.
  GroupBy group_by;
  // jobs is the number of threads the run uses (>= 1): with 1 everything
  // runs on the calling thread; with 2 or more the session applies the
  // events on a thread of its own while the calling thread reads or
  // generates them (event_feed.h); more than 2 gain nothing over 2. The
  // result is the same for every value.
  int jobs = 1;
  // progress, when set, is called every few tens of thousands of events.
  std::function<void(const AbProgress&)> progress;
};

// SessionMaker makes the evaluated session over a topology the runner has
// loaded from config.topology, reporting to `observer`.
using SessionMaker = std::function<absl::StatusOr<std::unique_ptr<AbSession>>(
    std::shared_ptr<const Topology> topology, const client::SessionSpec& config,
    AbObserver& observer)>;

// InProcessSessions makes in-process sessions over `registry` (not owned;
// must outlive the maker).
SessionMaker InProcessSessions(const PolicyRegistry& registry);

// RunAb runs the evaluation. `registry` holds the first policy for a
// workload's reference engine. A bad line of a recorded input (one that
// does not parse, or whose events the session refuses) is no error: it is
// counted in AbInput::malformed_lines with its line (see event_feed.h).
// Returns the input's errors (NotFound for a missing file; InvalidArgument
// naming a bad option, a directory, a trace CPU outside the topology, a CSV
// without the header, an input without a single event, a CPU map given
// with a workload input, which runs on the topology's own CPUs, or a
// group-by rule that needs cgroup paths on an input without any:
// CheckGroupByInput, and a trace without a `# schedcache_cgroup:` line,
// found as it replays; DataLoss
// for a truncated or corrupt gzip file; OutOfRange for a line over
// LineReader::kMaxLineBytes), the session's errors, DataLoss when the scan
// trace or the Perfetto trace cannot be written, or Unimplemented when
// scan_trace or perfetto is set and the session does not report single
// scans.
absl::StatusOr<AbResult> RunAb(const AbOptions& options,
                               const PolicyRegistry& registry,
                               const SessionMaker& make_session);

// CheckGroupByInput returns CgroupPathsMissing (cache_groups.h) when
// options.group_by needs cgroup paths and options.input is of a kind that
// never carries them (a workload, a CSV), so a sweep refuses such a value
// before it runs; OK otherwise.
absl::Status CheckGroupByInput(const AbOptions& options);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_RUNNER_H_
