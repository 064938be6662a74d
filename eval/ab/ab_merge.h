// MergeAbResults: one report over several inputs (`schedcache ab
// --inputs-file`, `schedcache ab-merge`), made of the per-input results of
// one session configuration. Each input ran in a session of its own (a
// trace's tgids and clock mean nothing to another trace's session), so the
// merged report is the sum of independent runs, in input-list order.
//
// What merges exactly: every count; the CPUs-scanned histogram and, when
// every input has it, the cpusScanned distribution rebuilt from it; the
// agreement share (sum of agreements / sum of decisions). What cannot:
// llcsScanned and scanNs (and cpusScanned when a server ran the sessions,
// which reports no histogram) keep their exact count, mean and max, while
// p50 and p99 become the largest of the inputs' values, an upper bound of
// the merged percentile (at most 1% of each input lies above its own p99).
//
// Thread contract: a pure function; thread-safe.
#ifndef SCHEDCACHE_EVAL_AB_AB_MERGE_H_
#define SCHEDCACHE_EVAL_AB_AB_MERGE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "eval/ab/ab_result.h"

namespace schedcache::ab {

// kMaxMergedExamples caps the malformed-line examples of a merged report.
inline constexpr size_t kMaxMergedExamples = 10;

// MergeAbResults merges `parts` (in input order) into one result:
//   input: description "N inputs: D1; D2; ...", topology, topology source
//     and hz of the parts (which must agree); samples, hand-overs and
//     malformed lines summed; examples prefixed by their input's
//     description, the first kMaxMergedExamples; startNs the earliest;
//     durationNs the sum (input time replayed).
//   policies: as the header comment says; runtimeOnPreferredLlc weighted
//     by each input's runtime (the sum of its processes' runtimeNs).
//   processes: every input's, busiest first (ties keep input order), so a
//     tgid may appear once per input; time series only for the
//     kMaxTimelines busiest overall.
// Returns InvalidArgument when `parts` is empty or two parts differ in
// policies (names and order), topology or hz, naming the input and both
// values.
absl::StatusOr<AbResult> MergeAbResults(std::vector<AbResult> parts);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_MERGE_H_
