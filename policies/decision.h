// What the engine reports: one policy's decision with evidence and cost, and
// the per-policy statistics behind GetReport.
#ifndef SCHEDCACHE_POLICIES_DECISION_H_
#define SCHEDCACHE_POLICIES_DECISION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace schedcache {

// NoPreferenceReason says why a policy holds no preferred LLC.
enum class NoPreferenceReason {
  kNone,               // there is a preference
  kNoData,             // never scanned, or nothing ran
  kSingleThread,       // invalid_nr: one thread
  kTooManyThreads,     // invalid_nr: nr_running_avg too high for the LLC
  kFootprintTooLarge,  // exceeds_capacity
  kTimedOut,           // no scan for more than affinity_timeout_epochs
  kDisabled,           // enable=off, or auto on a machine with no node of 2 LLCs
  kNotCacheAware,      // the `none` policy
  kOtherNumaNode,      // thread answer only: numa_balancing is on and the
                       // thread prefers a node other than the LLC's
  // Only in a PreferenceChange, as the process is no longer tracked:
  kExited,             // a ProcessExit ended the process
  kEvicted,            // dropped at max_processes or process_idle_timeout_ns
  // Last, so the values above keep theirs for plugins (plugin_abi.h):
  kKernelNone,         // the `kernel` policy: the running kernel's last
                       // decision for the process had no preferred CPU
};

// Preference is what a policy prefers for one process: the CPU
// (mm.pref_cpu), its LLC, and why there is none when there is none.
struct Preference {
  int llc = -1;
  int cpu = -1;
  NoPreferenceReason reason = NoPreferenceReason::kNoData;  // kNone: one
};

// LlcOccupancy is the summed occupancy of one LLC examined by a scan.
struct LlcOccupancy {
  int llc;
  uint64_t occupancy;  // sum over its CPUs, NICE_0_LOAD fixed point
};

// ScanCost is what one scan cost.
struct ScanCost {
  int cpus_scanned = 0;
  int llcs_scanned = 0;
  int64_t scan_ns = 0;  // wall time of the scan (ScanStopwatch)
};

// PolicyDecision is one policy's current answer for a process (and thread):
// its cache group's.
struct PolicyDecision {
  std::string policy;
  int preferred_cpu = -1;
  int preferred_llc = -1;
  NoPreferenceReason reason = NoPreferenceReason::kNoData;
  std::vector<LlcOccupancy> llc_occupancy;  // from the last executed scan
  int nr_running = 0;                       // seen by the last executed scan
  int64_t nr_running_avg = 0;
  ScanCost cost;                            // of the last executed scan
  bool scanned_now = false;                 // a requested scan executed
  // The thread count and footprint the decision was made with: the
  // process's, or its named cache group's sums (docs/MODEL.md, Cache groups).
  int32_t nr_threads = 0;
  int64_t footprint_pages = 0;
  // The process's cache group, whose preference this is (Sample::
  // cache_group; 0: the process's own). The engine fills it in.
  uint64_t cache_group = 0;
};

// Distribution summarises a set of non-negative integer observations.
struct Distribution {
  uint64_t count = 0;
  double mean = 0;
  int64_t p50 = 0;
  int64_t p99 = 0;
  int64_t max = 0;
};

struct PolicyReport {
  std::string name;
  uint64_t scans = 0;           // executed scans
  uint64_t scans_skipped = 0;   // next_scan gate closed, or disabled
  uint64_t scans_skipped_disabled = 0;  // of those, the session is disabled
  uint64_t scans_aborted = 0;   // invalid_nr / exceeds_capacity
  Distribution cpus_scanned;    // per executed scan
  Distribution llcs_scanned;
  Distribution scan_ns;
  uint64_t decisions = 0;       // scan triggers where the reference did not skip
  uint64_t agreements = 0;      // ... where both hold the same preferred LLC
  // agreements / decisions; none when there were no decisions (a policy
  // that never decided is not "100% in agreement").
  std::optional<double> agreement;
  uint64_t preferred_llc_changes = 0;
  double runtime_on_preferred_llc = 0;  // share of accounted runtime
  // Agreement with the running kernel, taken at its scans (docs/MODEL.md,
  // "Agreement with the kernel"); all 0 when the session saw no kernel
  // decision of a tracked process.
  uint64_t kernel_decisions = 0;   // kernel decisions of tracked processes
  uint64_t kernel_scans = 0;       // ... of those, with scanned = 1
  uint64_t kernel_agreements = 0;  // ... of those, where this policy's
                                   // preferred LLC right after equals the
                                   // LLC of the kernel's preferred CPU
  // kernel_agreements / kernel_scans; none when there was no kernel scan.
  std::optional<double> kernel_agreement;
  // This policy's scans (executed + aborted: the kernel's next_scan moves
  // on both) of the processes the kernel decided for, over their whole
  // lives in the session.
  uint64_t kernel_process_scans = 0;
};

// KernelProcessCounts is one policy's agreement with the kernel for one
// process: the kernel's scans of it, this policy's scans of it (executed +
// aborted) and the kernel scans at which both preferred the same LLC.
struct KernelProcessCounts {
  uint64_t kernel_scans = 0;
  uint64_t scans = 0;
  uint64_t agreements = 0;
};

// KernelProcessReport is KernelProcessCounts of one process for every
// policy, in session order.
struct KernelProcessReport {
  int32_t tgid = 0;
  std::vector<KernelProcessCounts> policies;
};

// CacheGroupRuntime is the runtime of the samples applied to one named
// cache group over the session (every life of its id: a group that ends
// and is named again adds up), and per policy, in session order, the part
// of it that ran on the LLC the policy preferred for the group at the
// sample (the test PolicyReport::runtime_on_preferred_llc makes). Sums
// saturate at INT64_MAX.
struct CacheGroupRuntime {
  uint64_t id = 0;
  int64_t runtime_ns = 0;
  std::vector<int64_t> runtime_on_preferred_llc_ns;
};

struct EngineReport {
  std::vector<PolicyReport> policies;
  uint64_t samples_applied = 0;
  uint64_t handovers_applied = 0;
  uint64_t exits_applied = 0;  // ProcessExit events, known tgid or not
  uint64_t starts_applied = 0;  // ProcessStart events
  uint64_t processes_tracked = 0;
  uint64_t processes_evicted = 0;
  uint64_t kernel_decisions_applied = 0;    // known tgid or not
  uint64_t kernel_decisions_unmatched = 0;  // of those, for no tracked process
  // Per process the kernel decided for: the tracked ones in slot order,
  // then those that ended, in the order they ended (the first
  // kMaxEndedKernelProcesses of them).
  std::vector<KernelProcessReport> kernel_processes;
  // Per named cache group id (Sample::cache_group; docs/MODEL.md, Cache
  // groups), sorted by id: the live groups, and those that ended, the
  // first kMaxEndedCacheGroups of them. Empty when no sample named one.
  std::vector<CacheGroupRuntime> cache_groups;
  // Ended groups left out of cache_groups past kMaxEndedCacheGroups.
  uint64_t cache_groups_left_out = 0;
};

// kMaxEndedKernelProcesses bounds how many ended processes
// EngineReport::kernel_processes keeps, so a long-running session's memory
// stays bounded; the per-policy totals stay exact.
inline constexpr size_t kMaxEndedKernelProcesses = 65536;

// kMaxEndedCacheGroups bounds how many ended cache groups
// EngineReport::cache_groups keeps, as kMaxEndedKernelProcesses does
// processes; live groups are always in it. Smaller than that bound, since
// GetReport carries the list: at about 20 + 10 bytes per policy each, the
// ended ones stay under 2 MB of gRPC's 4 MB default message with 10
// policies.
inline constexpr size_t kMaxEndedCacheGroups = 16384;

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_DECISION_H_
