#include "eval/report/internal/svg_axes.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/report/internal/html_escape.h"

namespace schedcache::report_internal {

absl::string_view PolicyColor(size_t index) {
  // Tableau's ten, minus the greys and olive that read poorly on white.
  static constexpr absl::string_view kColors[] = {
      "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return kColors[index % (sizeof(kColors) / sizeof(kColors[0]))];
}

double NiceCeiling(double value) {
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= value * (1 - 1e-12)) return m * power;
  }
  return 10.0 * power;
}

std::string Number(double value, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return absl::StrFormat("%.*f", decimals, value);
}

std::string OpenSvg(absl::string_view id, double width, double height,
                    absl::string_view label) {
  return absl::StrFormat(
      "<svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s\">\n",
      id, width, height, width, height, HtmlEscape(label));
}

std::string Text(double x, double y, absl::string_view text, absl::string_view anchor,
                 absl::string_view css_class) {
  return absl::StrFormat(
      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">%s</text>\n", x, y,
      anchor, css_class, HtmlEscape(text));
}

std::string XAxis(const Frame& frame, const std::vector<Tick>& ticks, absl::string_view title) {
  std::string svg;
  for (const Tick& tick : ticks) {
    absl::StrAppendFormat(&svg, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                          tick.at, frame.top, tick.at, frame.bottom() + 4);
    absl::StrAppend(&svg, Text(tick.at, frame.bottom() + 16, tick.label, "middle", "tick"));
  }
  absl::StrAppendFormat(&svg, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                        frame.left, frame.bottom(), frame.right(), frame.bottom());
  if (!title.empty()) {
    absl::StrAppend(&svg, Text(frame.left + frame.width / 2, frame.bottom() + 34, title,
                               "middle", "axis-title"));
  }
  return svg;
}

std::string YAxis(const Frame& frame, const std::vector<Tick>& ticks, absl::string_view title) {
  std::string svg;
  for (const Tick& tick : ticks) {
    absl::StrAppendFormat(&svg, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                          frame.left - 4, tick.at, frame.right(), tick.at);
    absl::StrAppend(&svg, Text(frame.left - 7, tick.at + 4, tick.label, "end", "tick"));
  }
  absl::StrAppendFormat(&svg, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                        frame.left, frame.top, frame.left, frame.bottom());
  if (!title.empty()) {
    const double x = frame.left - 44;
    const double y = frame.top + frame.height / 2;
    absl::StrAppendFormat(&svg,
                          "<text class=\"axis-title\" text-anchor=\"middle\" "
                          "transform=\"translate(%.1f %.1f) rotate(-90)\">%s</text>\n",
                          x, y, HtmlEscape(title));
  }
  return svg;
}

}  // namespace schedcache::report_internal
