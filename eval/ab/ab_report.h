// The one converter between the A/B evaluation's result (AbResult,
// eval/report/ab_result.h, which the text, CSV, HTML, scan-trace and
// Perfetto writers read) and its one schema, the schedcache.v1.AbReport
// message (proto/schedcache/v1/ab_report.proto); and `ab --json`, which is
// that message in protobuf's JSON mapping (api/proto_json.h). A policy's
// statistics go through api/'s PolicyReportToProto/FromProto, so a new
// per-policy statistic needs no change here.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_EVAL_AB_AB_REPORT_H_
#define SCHEDCACHE_EVAL_AB_AB_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/report/ab_result.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::ab {

// AbResultToProto is `result` as the message, with the derived figures the
// message carries for scripts (reference, cpu_time_ns, each policy's cost:
// eval/report/policy_cost.h) filled in. Strings are made valid UTF-8 (an
// invalid byte becomes U+FFFD), which protobuf requires.
// REQUIRES: ValidateAbResult(result) is OK.
v1::AbReport AbResultToProto(const AbResult& result);

// AbResultFromProto is AbResultToProto's inverse; the derived figures are
// ignored. Returns InvalidArgument naming the field when the report is not
// one AbResultToProto could have written (no policies, a process's
// per-policy lists not one entry per policy, an LLC below -1).
absl::StatusOr<AbResult> AbResultFromProto(const v1::AbReport& report);

// WriteJson writes AbResultToProto(result) as one line of JSON and a
// newline to `out` (`ab --json FILE`). Returns InvalidArgument when
// `result` is malformed (ValidateAbResult), DataLoss when the stream fails.
absl::Status WriteJson(const AbResult& result, std::ostream& out);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_REPORT_H_
