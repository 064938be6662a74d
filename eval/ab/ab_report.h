// The one converter between what an A/B evaluation gathers (AbResult,
// ab_result.h; a sweep's SweepResult, sweep_result.h) and the report's one
// schema, the schedcache.v1.AbReport and SweepReport messages
// (proto/schedcache/v1/ab_report.proto), which every report writer reads:
// text, CSV and HTML (eval/report/) and the JSON of `ab --json`, the shard
// files and `sweep --json`, which is the message in protobuf's JSON
// mapping (api/proto_json.h). A policy's statistics go through api/'s
// PolicyReportToProto/FromProto, so a new per-policy statistic needs no
// change here.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_EVAL_AB_AB_REPORT_H_
#define SCHEDCACHE_EVAL_AB_AB_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/ab/ab_result.h"
#include "eval/ab/sweep_result.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::ab {

// AbResultToProto is `result` as the message, with the derived figures the
// message carries for scripts (reference, cpu_time_ns, each policy's cost:
// eval/report/policy_cost.h) filled in when it has policies. Strings are
// made valid UTF-8 (a byte that starts no well-formed sequence becomes
// U+FFFD), which protobuf requires. A malformed result gives a malformed
// message, which the writers refuse (ValidateAbReport).
v1::AbReport AbResultToProto(const AbResult& result);

// AbResultFromProto is AbResultToProto's inverse; the derived figures are
// ignored. Returns InvalidArgument naming the field when the report is not
// one AbResultToProto could have written (ValidateAbReport; an LLC below
// -1).
absl::StatusOr<AbResult> AbResultFromProto(const v1::AbReport& report);

// SweepResultToProto is `result` as the message: per row its input and its
// policies' statistics, and the reference's name. Strings as
// AbResultToProto.
v1::SweepReport SweepResultToProto(const SweepResult& result);

// WriteJson writes `report` as one line of JSON and a newline to `out`
// (`ab --json FILE`). Returns InvalidArgument when `report` is malformed
// (ValidateAbReport), DataLoss when the stream fails.
absl::Status WriteJson(const v1::AbReport& report, std::ostream& out);

// WriteSweepJson is WriteJson for a sweep (`sweep --json FILE`); malformed
// is ValidateSweepReport's.
absl::Status WriteSweepJson(const v1::SweepReport& report, std::ostream& out);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_REPORT_H_
