// The HTML report's topology view: <svg class="chart" id="topology">, one
// panel per policy showing the machine's LLCs as a grid, a row per package
// and NUMA node (wrapping after kTopologyCellsPerRow LLCs). Each LLC is a
// cell (class "llc") shaded by the busiest process's summed occupancy of it
// at its last scan under that policy (darkest: the LLC that scan found
// busiest), and holds a numbered marker (class "pref") for each of the
// kMaxTimelines busiest processes whose final preferred LLC under that
// policy it is. TopologyKey names the numbers.
//
// Thread contract: pure functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_TOPOLOGY_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_TOPOLOGY_H_

#include <string>

#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::report_internal {

inline constexpr int kTopologyCellsPerRow = 12;

// REQUIRES for both: ValidateAbReport(report) is OK.
// TopologyKey returns an HTML paragraph: what the markers' numbers and the
// shading stand for.
std::string TopologyKey(const v1::AbReport& report);
// TopologyView returns the SVG; a note instead of panels when the report
// has no topology layout (AbReport.llcs is empty, as in a merged report).
std::string TopologyView(const v1::AbReport& report);

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_TOPOLOGY_H_
