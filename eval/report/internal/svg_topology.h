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

#include "eval/report/ab_result.h"

namespace schedcache::report_internal {

inline constexpr int kTopologyCellsPerRow = 12;

// REQUIRES for both: ValidateAbResult(result) is OK.
// TopologyKey returns an HTML paragraph: what the markers' numbers and the
// shading stand for.
std::string TopologyKey(const AbResult& result);
// TopologyView returns the SVG; a note instead of panels when the result
// has no topology layout (AbResult::llcs is empty, as in a merged report).
std::string TopologyView(const AbResult& result);

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_TOPOLOGY_H_
