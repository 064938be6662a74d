#include "eval/report/sweep_html.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/report/internal/html_escape.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/internal/svg_axes.h"
#include "eval/report/internal/svg_chart.h"
#include "eval/report/sweep_report.h"

namespace schedcache {
namespace {

using report_internal::Frame;
using report_internal::HtmlEscape;
using report_internal::Tick;

constexpr double kWidth = 900;
constexpr double kLeft = 80;
constexpr double kRight = 24;
constexpr double kTitleHeight = 30;
constexpr double kPlotHeight = 160;
constexpr double kAxisHeight = 48;
constexpr double kPanelHeight = kTitleHeight + kPlotHeight + kAxisHeight;

constexpr absl::string_view kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #ddd; white-space: nowrap; }
th { background: #f4f4f4; } td.num { text-align: right; }
.legend { margin: 8px 0; font-size: 13px; } .key { margin-right: 18px; }
.swatch { display: inline-block; width: 14px; height: 4px; margin-right: 6px; }
svg.chart { display: block; margin: 8px 0 16px; font-size: 12px; }
svg.chart text.tick { fill: #555; font-size: 11px; }
svg.chart line.grid { stroke: #e6e6e6; } svg.chart line.axis { stroke: #333; }
svg.chart path.line { fill: none; stroke-width: 2; }
)css";

// Series is one policy's points against an axis's values; a value no
// combination gave a number for (agreement without decisions) is empty.
using Series = std::vector<std::optional<double>>;

// MeanAgainst averages `metric` over the rows holding each value of axis
// `axis`, for policy `policy`.
template <typename Metric>
Series MeanAgainst(const v1::SweepReport& report, int axis, int policy,
                   Metric metric) {
  Series series;
  for (const std::string& value : report.axes(axis).values()) {
    double sum = 0;
    int count = 0;
    for (const v1::SweepRow& row : report.rows()) {
      if (row.values(axis) != value) continue;
      const std::optional<double> v = metric(row.policies(policy));
      if (!v.has_value()) continue;
      sum += *v;
      ++count;
    }
    series.push_back(count > 0 ? std::optional<double>(sum / count)
                               : std::nullopt);
  }
  return series;
}

// Path draws `series` as a line, broken where a point is missing, with a
// dot at each point: a point between two missing ones has no line to show
// it.
std::string Path(const Series& series, const Frame& frame, double y_top,
                 size_t policy, absl::string_view name) {
  const double step = frame.width / std::max<size_t>(series.size(), 1);
  const absl::string_view color = report_internal::PolicyColor(policy);
  std::string d;
  std::string dots;
  bool pen_down = false;
  for (size_t i = 0; i < series.size(); ++i) {
    if (!series[i].has_value()) {
      pen_down = false;
      continue;
    }
    const double x = frame.left + (i + 0.5) * step;
    const double y = frame.bottom() - *series[i] / y_top * frame.height;
    absl::StrAppendFormat(&d, "%s%.1f %.1f ", pen_down ? "L" : "M", x, y);
    absl::StrAppendFormat(&dots,
                          "<circle class=\"point\" data-policy=\"%s\" "
                          "cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                          HtmlEscape(name), x, y, color);
    pen_down = true;
  }
  return absl::StrFormat(
      "<path class=\"line\" data-policy=\"%s\" d=\"%s\" stroke=\"%s\">"
      "<title>%s</title></path>\n%s",
      HtmlEscape(name), d, color, HtmlEscape(name), dots);
}

// Panel draws one metric of every policy against axis `axis`, its frame's
// top at `top`.
template <typename Metric>
std::string Panel(const v1::SweepReport& report, int axis, double top,
                  absl::string_view title, Metric metric) {
  const auto& policies = report.rows(0).policies();
  std::vector<Series> lines;
  double highest = 0;
  for (int p = 0; p < policies.size(); ++p) {
    lines.push_back(MeanAgainst(report, axis, p, metric));
    for (const auto& v : lines.back()) highest = std::max(highest, v.value_or(0));
  }
  const double y_top = report_internal::NiceCeiling(std::max(highest, 1.0));
  const Frame frame{kLeft, top + kTitleHeight, kWidth - kLeft - kRight,
                    kPlotHeight};
  const auto& values = report.axes(axis).values();
  std::vector<Tick> x_ticks;
  // At most about 20 labels, however many values.
  const int every = (values.size() + 19) / 20;
  for (int i = 0; i < values.size(); i += every) {
    x_ticks.push_back(
        {frame.left + (i + 0.5) * frame.width / values.size(), values[i]});
  }
  std::vector<Tick> y_ticks;
  for (double v : {0.0, y_top / 2, y_top}) {
    y_ticks.push_back({frame.bottom() - v / y_top * frame.height,
                       report_internal::Number(v, y_top / 2)});
  }
  std::string svg = report_internal::Text(frame.left, frame.top - 10, title,
                                          "start", "panel-title");
  absl::StrAppend(&svg, report_internal::XAxis(frame, x_ticks, report.axes(axis).key()),
                  report_internal::YAxis(frame, y_ticks, ""));
  for (int p = 0; p < policies.size(); ++p) {
    absl::StrAppend(&svg, Path(lines[p], frame, y_top, p, policies[p].policy()));
  }
  return svg;
}

std::string AxisChart(const v1::SweepReport& report, int axis) {
  const std::string& key = report.axes(axis).key();
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" id=\"sweep-%s\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"%s\">\n",
      HtmlEscape(key), kWidth, 2 * kPanelHeight,
      HtmlEscape(absl::StrCat("agreement and CPUs scanned against ", key)));
  absl::StrAppend(
      &svg,
      Panel(report, axis, 0, "agreement with the reference (%)",
            [](const v1::PolicyReport& r) -> std::optional<double> {
              if (!r.has_agreement()) return std::nullopt;
              return r.agreement() * 100;
            }),
      Panel(report, axis, kPanelHeight, "CPUs scanned per scan (mean)",
            [](const v1::PolicyReport& r) -> std::optional<double> {
              return r.cpus_scanned().mean();
            }),
      "</svg>\n");
  return svg;
}

std::string TableSection(const v1::SweepReport& report) {
  const PolicyTable table = BuildSweepTable(report, SweepLayout::kSweep);
  std::string html = "<table class=\"sweep\"><thead><tr>";
  for (const TableColumn& column : table.columns) {
    const std::string heading = column.group.empty()
                                    ? column.name
                                    : absl::StrCat(column.group, ": ", column.name);
    absl::StrAppend(&html, "<th>", HtmlEscape(heading), "</th>");
  }
  html += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    html += "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&html, table.columns[c].numeric ? "<td class=\"num\">" : "<td>",
                      HtmlEscape(row[c]), "</td>");
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n";
}

}  // namespace

absl::Status WriteSweepHtml(const v1::SweepReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepReport(report, SweepLayout::kSweep));
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      // Nothing may be fetched: the page must work as a single file offline.
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
         "'none'; style-src 'unsafe-inline'\">\n"
      << "<title>schedcache sweep: " << HtmlEscape(report.input()) << "</title>\n"
      << "<style>" << kStyle << "</style></head><body>\n"
      << "<h1>schedcache sweep: " << HtmlEscape(report.input()) << "</h1>\n";
  if (report.axes_size() > 1) {
    out << "<p>Several keys are varied: each point is the mean over the "
           "combinations holding that value.</p>\n";
  }
  std::vector<std::string> names;
  for (const v1::PolicyReport& policy : report.rows(0).policies()) {
    names.push_back(policy.policy());
  }
  const std::string legend = report_internal::PolicyLegend(names);
  for (int a = 0; a < report.axes_size(); ++a) {
    out << "<section><h2>" << HtmlEscape(report.axes(a).key()) << "</h2>\n"
        << legend << AxisChart(report, a) << "</section>\n";
  }
  out << "<section><h2>All combinations</h2>\n" << TableSection(report)
      << "</section>\n</body></html>\n";
  return report_internal::StreamStatus(out, "the sweep HTML report");
}

}  // namespace schedcache
