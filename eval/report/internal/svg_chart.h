// The HTML report's two charts, as inline SVG:
//  - CpusScannedChart: <svg class="chart" id="cpus-scanned">, one panel per
//    policy, a bar (class "bar") per distinct number of CPUs scanned, its
//    height the share of that policy's executed scans; log2 x axis shared by
//    all panels so their spreads compare at a glance.
//  - LlcOverTimeChart: <svg class="chart" id="llc-over-time">, one panel per
//    process that has a time series (at most kMaxTimelines), a step line
//    (class "step") per policy of its preferred LLC over time.
//
// Thread contract: pure functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_CHART_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_CHART_H_

#include <string>
#include <vector>

#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::report_internal {

// REQUIRES for both: ValidateAbReport(report) is OK.
std::string CpusScannedChart(const v1::AbReport& report);
std::string LlcOverTimeChart(const v1::AbReport& report);

// PolicyLegend returns an HTML legend: a colour swatch and name per policy,
// in session order.
std::string PolicyLegend(const std::vector<std::string>& policies);
std::string PolicyLegend(const v1::AbReport& report);

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_CHART_H_
