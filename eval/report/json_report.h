// Writer of the A/B report as JSON (`schedcache ab --json FILE`): the whole
// AbResult with lowerCamelCase keys, for scripts.
//
// Thread contract: a pure function over a const AbResult; thread-safe as
// long as each call has its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_JSON_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_JSON_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "eval/report/ab_result.h"

namespace schedcache {

// WriteJson writes one JSON object and a newline to `out`:
//   {"reference": name of policies[0],
//    "input": {description, topology, topologySource, samples, handOvers,
//              malformedLines, malformedExamples[], startNs, durationNs, hz},
//    "cpuTimeNs": simulated CPU time, the sum of the processes' runtimeNs,
//    "policies": [{name, scans, scansSkipped, scansAborted,
//                  cpusScanned|llcsScanned|scanNs: {count, mean, p50, p99, max},
//                  decisions, agreements, agreement (null when decisions
//                  is 0: nothing to agree on), preferredLlcChanges,
//                  runtimeOnPreferredLlc,
//                  cpusScannedHistogram: [{cpusScanned, scans}],
//                  cost: {cpusScannedTotal, cpusScannedPerCpuSecond,
//                         cpusScannedVsReference, scanNsTotal,
//                         scanTimeShare, scanTimeVsReference (null where
//                         nothing divides: see policy_cost.h),
//                         seed: null or {cyclesPctNumaBalancingOff,
//                         vsFullScanNumaBalancingOff, cyclesPctNumaBalancingOn,
//                         vsFullScanNumaBalancingOn}}}],
//    "processes": [{tgid, comm, runtimeNs,
//                   preferredLlc: {policy name: llc or null},
//                   preferredLlcOverTime (busiest processes only):
//                     {policy name: [{timestampNs, llc or null}]}}]}
// Returns InvalidArgument when `result` is malformed (see
// ValidateAbResult), DataLoss when the stream fails.
absl::Status WriteJson(const AbResult& result, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_JSON_REPORT_H_
