// Writer of `schedcache ab --html FILE`: one self-contained HTML page (inline
// CSS and SVG, no scripts, nothing fetched) with the input summary, the
// policy table, the cost table beside the seed's figures
// (<section id="cost">), the distribution of CPUs scanned per policy
// (<svg id="cpus-scanned">), the preferred LLC over time of the busiest
// processes (<svg id="llc-over-time">), the topology view of their final
// preferred LLCs over the machine's LLCs (<svg id="topology">, see
// internal/svg_topology.h), and each process's final preferred LLC per
// policy. All text from the input is HTML-escaped.
//
// Thread contract: a pure function over a const schedcache.v1.AbReport;
// thread-safe as long as each call has its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_HTML_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_HTML_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache {

// kHtmlMaxProcessRows bounds the process table; the JSON has them all.
inline constexpr int kHtmlMaxProcessRows = 50;

// WriteHtml writes the page to `out`. Returns InvalidArgument when `report`
// is malformed (see ValidateAbReport), DataLoss when the stream fails.
absl::Status WriteHtml(const v1::AbReport& report, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_HTML_REPORT_H_
