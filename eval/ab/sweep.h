// Sweeps (`schedcache sweep`, and `schedcache ab` with lists of hackbench
// groups and fds): one A/B evaluation (RunAb) per combination of the values
// of a few varied keys, run in parallel in this process. Each combination is
// exactly the `schedcache ab` run with those values, so a sweep's row equals
// that run's result (scan time aside: it is wall time).
//
// A key is a tunable (as --set takes it, e.g. affinity_timeout_epochs or
// visited-scan.KEY), `topology` (a --topology SOURCE per value), `group-by`
// (a --group-by RULE per value: tgid, comm, file:PATH), `seed`, or a
// workload flag without its dashes' prefix: groups, fds, instances,
// server-threads, client-threads, duration-ms, spill-probability, hz.
//
// Thread contract: ParseVary and MakeSweepPlan are pure; RunSweep runs its
// combinations on worker threads of its own and calls `progress` on the
// calling thread.
#ifndef SCHEDCACHE_EVAL_AB_SWEEP_H_
#define SCHEDCACHE_EVAL_AB_SWEEP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/sweep_result.h"
#include "policies/policy_registry.h"

namespace schedcache::ab {

// kMaxSweepCombinations bounds a sweep, so a typo (1..1000000) is an error
// rather than hours of work.
inline constexpr size_t kMaxSweepCombinations = 10'000;

// ParseSweepValues reads "V1,V2,..." where a value that starts with an
// integer and ".." is an integer range "A..B" (A <= B, both included); any
// other value is taken as it is (so no value can hold a comma). Returns
// InvalidArgument "FLAG: why", FLAG being the flag as typed (e.g. "--vary
// seed=1,,2", "--groups 1,,2"), for an empty value, a duplicate value, or a
// bad or too long range.
absl::StatusOr<std::vector<std::string>> ParseSweepValues(
    absl::string_view values, absl::string_view flag);

// ParseVary reads "KEY=V1,V2,..." (the values as ParseSweepValues reads
// them). Returns InvalidArgument naming the text for a missing '=' or key,
// or ParseSweepValues' errors.
absl::StatusOr<SweepAxis> ParseVary(absl::string_view text);

// SweepPlan is the options of every combination, in combination order (the
// first axis varies slowest).
struct SweepPlan {
  std::vector<SweepAxis> axes;
  std::vector<std::vector<std::string>> values;  // per combination
  std::vector<AbOptions> runs;                   // per combination
};

// MakeSweepPlan applies each combination to `base`. Every value is checked
// on its own first, so an error names the one key and value at fault:
// InvalidArgument "--vary KEY=VALUE: why" for a value that does not parse,
// an unknown tunable or a value the tunable refuses, a workload value out of
// range, or a workload key with a trace/csv input. Also InvalidArgument for
// no axis, a key varied twice or also given with --set, too many
// combinations, or a combination the workload refuses as a whole (naming
// all its values).
absl::StatusOr<SweepPlan> MakeSweepPlan(const AbOptions& base,
                                        std::vector<SweepAxis> axes,
                                        const PolicyRegistry& registry);

// SweepProgress is called each time a combination finishes.
using SweepProgress = std::function<void(size_t done, size_t total)>;

// RunSweep runs every combination of `plan` in-process on up to `jobs`
// threads (at least 1). A combination whose run fails is listed in
// SweepResult::failures with its error; the others still count. `input` is
// the --input as typed, for the report.
SweepResult RunSweep(const SweepPlan& plan, const PolicyRegistry& registry,
                     int jobs, absl::string_view input,
                     const SweepProgress& progress);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_SWEEP_H_
