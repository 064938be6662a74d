#include "eval/report/html_report.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/report/internal/html_escape.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/internal/svg_chart.h"
#include "eval/report/internal/svg_topology.h"
#include "eval/report/policy_table.h"
#include "eval/report/scan_event.h"

namespace schedcache {
namespace {

using report_internal::HtmlEscape;

// kStyle is the page's only styling; the system font stack needs no
// download.
constexpr absl::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 24px; color: #222; }
.scroll { overflow-x: auto; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; }
dt { font-weight: 600; } dd { margin: 0; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
th.group { border-left: 2px solid #ccc; } td.first, th.first { border-left: 2px solid #ccc; }
pre { background: #f8f8f8; padding: 8px; overflow-x: auto; }
.legend { margin: 8px 0; font-size: 13px; }
.key { margin-right: 18px; white-space: nowrap; }
.swatch { display: inline-block; width: 14px; height: 4px; margin-right: 6px; vertical-align: middle; }
svg.chart { display: block; margin: 8px 0 16px; font-size: 12px; }
svg.chart text.panel-title { font-weight: 600; font-size: 13px; }
svg.chart text.axis-title { fill: #444; }
svg.chart text.tick { fill: #555; font-size: 11px; }
svg.chart line.grid { stroke: #e6e6e6; } svg.chart line.axis { stroke: #333; }
svg.chart path.step { fill: none; stroke-width: 2; stroke-linejoin: round; }
svg.chart text.marker { fill: #fff; font-size: 10px; font-weight: 600; }
)css";

std::string InputSection(const v1::AbInput& in) {
  std::string html = "<section id=\"input\"><h2>Input</h2><dl>\n";
  auto row = [&](absl::string_view name, absl::string_view value) {
    absl::StrAppend(&html, "<dt>", name, "</dt><dd>", HtmlEscape(value), "</dd>\n");
  };
  row("input", in.description());
  row("topology", absl::StrCat(in.topology(), " (", in.topology_source(), ")"));
  row("samples", absl::StrCat(in.samples()));
  row("hand-overs", absl::StrCat(in.handovers()));
  row("malformed lines", absl::StrCat(in.malformed_lines()));
  row("duration", absl::StrFormat("%.6f s at HZ %d", in.duration_ns() / 1e9, in.hz()));
  html += "</dl>\n";
  if (!in.malformed_examples().empty()) {
    html += "<p>First malformed lines:</p><pre>";
    for (const std::string& line : in.malformed_examples()) {
      absl::StrAppend(&html, HtmlEscape(line), "\n");
    }
    html += "</pre>\n";
  }
  return html + "</section>\n";
}

// TableHtml renders one of the shared tables (policy_table.h) with its
// group headings, as <table class="`css_class`">.
std::string TableHtml(const PolicyTable& table, absl::string_view css_class) {
  std::string groups = "<tr>";
  std::string names = "<tr>";
  for (size_t c = 0; c < table.columns.size();) {
    size_t span = 1;
    while (c + span < table.columns.size() &&
           table.columns[c + span].group == table.columns[c].group) {
      ++span;
    }
    absl::StrAppendFormat(&groups, "<th class=\"group\" colspan=\"%d\">%s</th>", span,
                          HtmlEscape(table.columns[c].group));
    for (size_t k = c; k < c + span; ++k) {
      absl::StrAppend(&names, k == c ? "<th class=\"first\">" : "<th>",
                      HtmlEscape(table.columns[k].name), "</th>");
    }
    c += span;
  }
  std::string html = absl::StrCat("<div class=\"scroll\"><table class=\"", css_class,
                                  "\"><thead>", groups, "</tr>\n", names,
                                  "</tr></thead><tbody>\n");
  for (const auto& row : table.rows) {
    html += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool first = c == 0 || table.columns[c].group != table.columns[c - 1].group;
      absl::StrAppend(&html, "<td class=\"", table.columns[c].numeric ? "num" : "text",
                      first ? " first" : "", "\">", HtmlEscape(row[c]), "</td>");
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table></div>";
}

std::string PolicySection(const v1::AbReport& report) {
  return absl::StrCat("<section id=\"policies\"><h2>Policies</h2>",
                      TableHtml(BuildPolicyTable(report), "policies"), "</section>\n");
}

std::string CostSection(const v1::AbReport& report) {
  return absl::StrCat("<section id=\"cost\"><h2>Cost of the scans</h2><p>",
                      HtmlEscape(CostTableCaption(report)), "</p>",
                      TableHtml(BuildCostTable(report), "cost"), "</section>\n");
}

// CacheGroupSection is the text report's cache-group table; nothing when
// no sample named a group.
std::string CacheGroupSection(const v1::AbReport& report) {
  if (report.cache_groups_size() == 0) return "";
  return absl::StrCat(
      "<section id=\"cache-groups\"><h2>Cache groups</h2><p>Busiest first; "
      "a member's final preferred LLC is its group's (docs/MODEL.md, Cache "
      "groups).</p>",
      TableHtml(BuildCacheGroupTable(report), "cache-groups"), "</section>\n");
}

std::string ProcessSection(const v1::AbReport& report) {
  std::string html =
      "<section id=\"processes\"><h2>Final preferred LLC per process</h2>"
      "<table class=\"processes\"><thead><tr><th>tgid</th><th>comm</th><th>runtime (ms)</th>";
  for (const v1::AbPolicy& policy : report.policies()) {
    absl::StrAppend(&html, "<th>", HtmlEscape(policy.report().policy()), "</th>");
  }
  html += "</tr></thead><tbody>\n";
  const int rows = std::min(report.processes_size(), kHtmlMaxProcessRows);
  for (int r = 0; r < rows; ++r) {
    const v1::AbProcess& p = report.processes(r);
    absl::StrAppendFormat(&html, "<tr><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%.1f</td>",
                          p.tgid(), HtmlEscape(p.comm()), p.runtime_ns() / 1e6);
    for (int llc : p.final_preferred_llc()) {
      absl::StrAppend(&html, "<td class=\"num\">",
                      llc == kNoPreferredLlc ? "none" : absl::StrCat(llc), "</td>");
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";
  if (report.processes_size() > rows) {
    absl::StrAppendFormat(&html, "<p>%d more processes are in the JSON report.</p>\n",
                          report.processes_size() - rows);
  }
  return html + "</section>\n";
}

}  // namespace

absl::Status WriteHtml(const v1::AbReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbReport(report));
  const std::string legend = report_internal::PolicyLegend(report);
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      // Nothing may be fetched: the page must work as a single file offline.
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'\">\n"
      << "<title>schedcache A/B: " << HtmlEscape(report.input().description()) << "</title>\n"
      << "<style>" << kStyle << "</style></head><body>\n"
      << "<h1>schedcache A/B report</h1>\n"
      << InputSection(report.input()) << PolicySection(report) << CostSection(report)
      << CacheGroupSection(report)
      << "<section id=\"distribution\"><h2>CPUs scanned per scan</h2>\n"
      << legend << report_internal::CpusScannedChart(report) << "</section>\n"
      << "<section id=\"timelines\"><h2>Preferred LLC over time, busiest processes</h2>\n"
      << legend << report_internal::LlcOverTimeChart(report) << "</section>\n"
      << "<section id=\"topology-view\"><h2>Topology: preferred LLC of the busiest "
         "processes</h2>\n"
      << legend << report_internal::TopologyKey(report)
      << report_internal::TopologyView(report) << "</section>\n"
      << ProcessSection(report) << "</body></html>\n";
  return report_internal::StreamStatus(out, "the HTML report");
}

}  // namespace schedcache
