#include "eval/report/internal/svg_topology.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/report/internal/html_escape.h"
#include "eval/report/internal/svg_axes.h"
#include "eval/report/scan_event.h"

namespace schedcache::report_internal {
namespace {

constexpr double kWidth = 900;
constexpr double kLabelWidth = 140;  // "package P / node N" left of a row
constexpr double kTitleHeight = 30;
constexpr double kCellWidth = 56;
constexpr double kCellHeight = 50;
constexpr double kGap = 4;
constexpr double kMarkerRadius = 7;
constexpr int kMarkersPerLine = 3;
constexpr absl::string_view kShade = "#1f77b4";

// GridRow is one line of cells: LLCs of one package and node.
struct GridRow {
  std::string label;
  std::vector<const v1::AbLlcPlace*> llcs;
};

using LlcPlaces = google::protobuf::RepeatedPtrField<v1::AbLlcPlace>;
using ScanOccupancy = google::protobuf::RepeatedPtrField<v1::LlcOccupancy>;

// Rows groups the LLCs by package and node in order of their first LLC,
// kTopologyCellsPerRow to a line.
std::vector<GridRow> Rows(const LlcPlaces& llcs) {
  std::vector<std::pair<int, int>> groups;  // package, node
  for (const v1::AbLlcPlace& llc : llcs) {
    const std::pair<int, int> group{llc.package(), llc.numa_node()};
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
      groups.push_back(group);
    }
  }
  std::vector<GridRow> rows;
  for (const auto& [package, node] : groups) {
    int in_group = 0;
    for (const v1::AbLlcPlace& llc : llcs) {
      if (llc.package() != package || llc.numa_node() != node) continue;
      if (in_group++ % kTopologyCellsPerRow == 0) {
        rows.push_back({absl::StrFormat("package %d / node %d", package, node), {}});
      }
      rows.back().llcs.push_back(&llc);
    }
  }
  return rows;
}

// Occupancy is what one policy's last scan of the busiest process saw.
struct Occupancy {
  const ScanOccupancy* per_llc = nullptr;
  uint64_t max = 0;

  uint64_t Of(int llc) const {
    if (per_llc == nullptr) return 0;
    for (const v1::LlcOccupancy& o : *per_llc) {
      if (static_cast<int64_t>(o.llc()) == llc) return o.occupancy();
    }
    return 0;
  }
};

Occupancy OccupancyOf(const v1::AbReport& report, int policy) {
  Occupancy occupancy;
  const v1::AbLastScan& last = report.busiest_last_scan();
  if (last.tgid() == 0 || policy >= last.per_policy_size()) return occupancy;
  occupancy.per_llc = &last.per_policy(policy).llcs();
  for (const v1::LlcOccupancy& o : *occupancy.per_llc) {
    occupancy.max = std::max<uint64_t>(occupancy.max, o.occupancy());
  }
  return occupancy;
}

int MarkedProcesses(const v1::AbReport& report) {
  return std::min(report.processes_size(), kMaxTimelines);
}

// Cell draws one LLC at (x, y) with the markers of the processes that
// prefer it under `policy`.
std::string Cell(const v1::AbReport& report, int policy, const v1::AbLlcPlace& llc,
                 const Occupancy& occupancy, double x, double y) {
  const uint64_t occ = occupancy.Of(llc.llc());
  const double shade =
      occupancy.max == 0 ? 0 : static_cast<double>(occ) / static_cast<double>(occupancy.max);
  std::string svg = absl::StrFormat(
      "<rect class=\"llc\" data-llc=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
      "fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"#888\"><title>LLC %d (package %d, node %d, "
      "%d CPUs): occupancy %d at the last scan</title></rect>\n",
      llc.llc(), x, y, kCellWidth, kCellHeight, kShade, shade, llc.llc(), llc.package(),
      llc.numa_node(), llc.cpus(), occ);
  absl::StrAppend(&svg, Text(x + 4, y + 13, absl::StrCat("LLC ", llc.llc()), "start", "tick"));
  int slot = 0;
  for (int k = 0; k < MarkedProcesses(report); ++k) {
    const v1::AbProcess& p = report.processes(k);
    if (p.final_preferred_llc(policy) != llc.llc()) continue;
    const double cx = x + 4 + kMarkerRadius + (slot % kMarkersPerLine) * (2 * kMarkerRadius + 3);
    const double cy = y + 24 + (slot / kMarkersPerLine) * (2 * kMarkerRadius + 2);
    ++slot;
    absl::StrAppendFormat(
        &svg,
        "<g class=\"pref\" data-tgid=\"%d\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.0f\" "
        "fill=\"%s\"/>%s<title>%s (tgid %d) prefers LLC %d</title></g>\n",
        p.tgid(), cx, cy, kMarkerRadius, PolicyColor(policy),
        Text(cx, cy + 4, absl::StrCat(k + 1), "middle", "marker"), HtmlEscape(p.comm()), p.tgid(),
        llc.llc());
  }
  return svg;
}

}  // namespace

std::string TopologyKey(const v1::AbReport& report) {
  std::string html = "<p class=\"legend\">Markers: ";
  for (int k = 0; k < MarkedProcesses(report); ++k) {
    const v1::AbProcess& p = report.processes(k);
    absl::StrAppendFormat(&html, "<span class=\"key\">%d = %s (tgid %d)</span>", k + 1,
                          HtmlEscape(p.comm()), p.tgid());
  }
  const v1::AbLastScan& last = report.busiest_last_scan();
  if (last.tgid() == 0) {
    return absl::StrCat(html, "<br>No shading: the busiest process's last scan is not "
                              "known (no policy scanned it).</p>\n");
  }
  std::string comm;
  for (const v1::AbProcess& p : report.processes()) {
    if (p.tgid() == last.tgid()) comm = p.comm();
  }
  return absl::StrCat(
      html, "<br>Shading: the summed occupancy of each LLC that the last scan of ",
      HtmlEscape(comm), " (tgid ", last.tgid(),
      ") examined under each policy, darkest for the busiest LLC.</p>\n");
}

std::string TopologyView(const v1::AbReport& report) {
  if (report.llcs().empty()) {
    return absl::StrCat(OpenSvg("topology", kWidth, 40, "no topology layout"),
                        Text(kLabelWidth, 24, "this result holds no topology layout",
                             "start", "note"),
                        "</svg>\n");
  }
  const std::vector<GridRow> rows = Rows(report.llcs());
  const double row_height = kCellHeight + kGap;
  const double panel_height = kTitleHeight + rows.size() * row_height + kGap;
  std::string svg = OpenSvg("topology", kWidth, panel_height * report.policies_size(),
                            "LLCs of the machine with each busy process's preferred LLC");
  for (int i = 0; i < report.policies_size(); ++i) {
    const double top = i * panel_height;
    const Occupancy occupancy = OccupancyOf(report, i);
    absl::StrAppend(&svg, Text(0, top + 20, report.policies(i).report().policy(), "start",
                               "panel-title"));
    for (size_t r = 0; r < rows.size(); ++r) {
      const double y = top + kTitleHeight + r * row_height;
      absl::StrAppend(&svg, Text(0, y + kCellHeight / 2 + 4, rows[r].label, "start", "tick"));
      for (size_t c = 0; c < rows[r].llcs.size(); ++c) {
        absl::StrAppend(&svg, Cell(report, i, *rows[r].llcs[c], occupancy,
                                   kLabelWidth + c * (kCellWidth + kGap), y));
      }
    }
  }
  return absl::StrCat(svg, "</svg>\n");
}

}  // namespace schedcache::report_internal
