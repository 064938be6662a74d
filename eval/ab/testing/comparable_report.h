// What tests compare when two A/B runs must give the same report: the
// result without its scan times, the one figure that is wall time and
// differs between any two runs, and that result's JSON report.
//
// Thread contract: free functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_AB_TESTING_COMPARABLE_REPORT_H_
#define SCHEDCACHE_EVAL_AB_TESTING_COMPARABLE_REPORT_H_

#include <string>

#include "eval/ab/ab_result.h"

namespace schedcache::ab {

// WithoutScanTimes is `result` with every policy's scan-time distribution
// zeroed.
AbResult WithoutScanTimes(AbResult result);

// ComparableJson is the JSON report (ab::WriteJson) of
// WithoutScanTimes(result), or "JSON report failed: STATUS" when it cannot
// be written, so that a comparison of two fails visibly.
std::string ComparableJson(AbResult result);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_TESTING_COMPARABLE_REPORT_H_
