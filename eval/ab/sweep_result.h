// What a sweep (`schedcache sweep`, and `schedcache ab` with lists of
// hackbench groups and fds) gathers: the varied keys and, per combination
// of their values, the A/B result of that run. Plain values, as
// ab_result.h; ab_report.h converts it to the schedcache.v1.SweepReport
// message the sweep's writers read.
//
// Thread contract: plain structs; thread-compatible.
#ifndef SCHEDCACHE_EVAL_AB_SWEEP_RESULT_H_
#define SCHEDCACHE_EVAL_AB_SWEEP_RESULT_H_

#include <string>
#include <vector>

#include "eval/ab/ab_result.h"

namespace schedcache {

// SweepAxis is one varied key and its values, in the order given.
struct SweepAxis {
  std::string key;  // "affinity_timeout_epochs", "groups", "topology", ...
  std::vector<std::string> values;
};

// SweepRow is one combination that ran: values[i] is axes[i]'s value.
struct SweepRow {
  std::vector<std::string> values;
  AbResult result;
};

// SweepFailure is one combination whose run failed; the others still count.
struct SweepFailure {
  std::vector<std::string> values;
  std::string error;
};

// SweepResult is the whole sweep. Rows are in combination order: the first
// axis varies slowest. Every row's result has the same policies, in order.
struct SweepResult {
  std::string input;  // the --input as typed
  std::vector<SweepAxis> axes;
  std::vector<SweepRow> rows;
  std::vector<SweepFailure> failures;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_AB_SWEEP_RESULT_H_
