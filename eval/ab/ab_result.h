// What an A/B evaluation (`schedcache ab`, docs/EVALUATION.md) accumulates
// while it runs, and what ab-merge combines: what was replayed, and what
// each policy did with it. Plain values with no behaviour. The report
// writers never see it: ab_report.h converts it, once, to the report's one
// schema, the schedcache.v1.AbReport message, which they read.
//
// Thread contract: plain structs; thread-compatible.
#ifndef SCHEDCACHE_EVAL_AB_AB_RESULT_H_
#define SCHEDCACHE_EVAL_AB_AB_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "eval/report/scan_event.h"
#include "policies/decision.h"

namespace schedcache {

// AbInput describes the input that was replayed.
struct AbInput {
  std::string description;      // e.g. "workload:redis seed=1", "trace:PATH"
  std::string topology;         // summary, e.g. "2 packages, 24 LLCs, 384 CPUs"
  std::string topology_source;  // e.g. "builtin:epyc-9654", "hwloc-xml:PATH"
  uint64_t samples = 0;
  uint64_t handovers = 0;
  uint64_t malformed_lines = 0;
  std::vector<std::string> malformed_examples;  // the first few, verbatim
  int64_t start_ns = 0;         // timestamp of the first sample
  int64_t duration_ns = 0;      // last sample's timestamp minus start_ns
  int hz = 0;                   // tick rate the samples were built with
  // Kernel decisions the session applied (0: the input had none, and the
  // reports show no "vs kernel" figures); of those, the ones of a process
  // the session did not track.
  uint64_t kernel_decisions = 0;
  uint64_t kernel_decisions_unmatched = 0;
};

// HistogramBin counts the executed scans that examined `cpus_scanned` CPUs.
struct HistogramBin {
  int64_t cpus_scanned = 0;
  uint64_t scans = 0;
};

// PolicyResult is one policy's statistics plus the exact distribution of
// CPUs scanned, which the report charts (the report's Distribution only
// holds its summary).
struct PolicyResult {
  PolicyReport report;                             // report.name is the policy
  std::vector<HistogramBin> cpus_scanned_histogram;  // ascending cpus_scanned
};

// ProcessResult is one process seen in the input.
struct ProcessResult {
  int tgid = 0;
  std::string comm;
  int64_t runtime_ns = 0;
  // final_preferred_llc[i] is policy i's preferred LLC at the end of the
  // input (kNoPreferredLlc: none); one entry per policy.
  std::vector<int> final_preferred_llc;
  // preferred_llc_over_time[i] lists policy i's change points in time order.
  // Filled only for the busiest processes (see kMaxTimelines); empty
  // otherwise.
  std::vector<std::vector<LlcChange>> preferred_llc_over_time;
  // kernel[i] is policy i's agreement with the kernel for this process
  // (docs/MODEL.md); empty when the kernel made no decision for it.
  std::vector<KernelProcessCounts> kernel;
};

// SaturatingAddNs is a + b for sums of nanoseconds, saturating at INT64_MAX
// (a CSV may give any delta up to it, and merges add many inputs) instead
// of wrapping.
inline int64_t SaturatingAddNs(int64_t a, int64_t b) {
  return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b;
}

// CacheGroupResult is one cache group that samples named (docs/MODEL.md,
// Cache groups); v1::AbCacheGroup says what each field holds.
struct CacheGroupResult {
  uint64_t id = 0;
  std::string name;  // empty: named by id alone
  std::vector<int32_t> member_tgids;  // in order of first sample in it
  int64_t runtime_ns = 0;
  // Per policy, the group's preferred LLC at the end (kNoPreferredLlc:
  // none).
  std::vector<int> final_preferred_llc;
  // Per policy, the group's runtime on its preferred LLC; empty: unknown.
  std::vector<int64_t> runtime_on_preferred_llc_ns;
};

// LlcPlace says where one LLC of the topology sits, for the HTML report's
// topology view.
struct LlcPlace {
  int llc = 0;  // dense id, as preferred LLCs name it
  int package = 0;
  int numa_node = 0;
  int cpus = 0;  // how many CPUs share it
};

// LastScanOccupancy is the evidence behind the busiest process's preferred
// LLC: per policy, the summed occupancy of each LLC its last executed scan
// examined (empty when that policy never scanned it), even when the process
// exited before the end. tgid 0: none is known (no policy scanned it, a
// merged result, or a server session that did not watch its scans).
struct LastScanOccupancy {
  int tgid = 0;
  std::vector<std::vector<LlcOccupancy>> per_policy;  // one entry per policy
};

// AbResult is the whole evaluation. policies[0] is the reference that the
// others' agreement is measured against.
struct AbResult {
  AbInput input;
  std::vector<PolicyResult> policies;
  std::vector<ProcessResult> processes;  // descending runtime_ns
  // The topology's LLCs by id; empty when unknown (a merged result).
  std::vector<LlcPlace> llcs;
  LastScanOccupancy busiest_last_scan;
  std::vector<CacheGroupResult> cache_groups;  // descending runtime_ns
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_AB_AB_RESULT_H_
