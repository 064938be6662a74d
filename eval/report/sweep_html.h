// WriteSweepHtml: a sweep's report as one self-contained HTML page: the
// sweep table, and per varied key a chart (<svg class="chart"
// id="sweep-KEY">) of two panels, agreement (%) and CPUs scanned per scan
// (mean), against the key's values, one line (class "line") per policy.
// With several keys varied, each point is the mean over the combinations
// that hold that value.
//
// Thread contract: a pure function; thread-safe with its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_SWEEP_HTML_H_
#define SCHEDCACHE_EVAL_REPORT_SWEEP_HTML_H_

#include <ostream>

#include "absl/status/status.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache {

// WriteSweepHtml returns ValidateSweepReport's errors, or DataLoss when the
// stream fails.
absl::Status WriteSweepHtml(const v1::SweepReport& report, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_SWEEP_HTML_H_
