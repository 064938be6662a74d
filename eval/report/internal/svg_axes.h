// Scales, ticks and axes shared by the report's SVG charts. Coordinates are
// SVG user units (pixels at 100% zoom); every function returns markup.
//
// Thread contract: pure functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_AXES_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_AXES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace schedcache::report_internal {

// Frame is a chart's plot area.
struct Frame {
  double left = 0;
  double top = 0;
  double width = 0;
  double height = 0;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// Tick is an axis position (pixels along the axis) and its label.
struct Tick {
  double at = 0;
  std::string label;
};

// PolicyColor returns a colour for the policy at `index`, distinct for the
// first eight and repeating after.
absl::string_view PolicyColor(size_t index);

// NiceCeiling returns the smallest of 1, 2, 5 times a power of ten that is
// >= value (value > 0).
double NiceCeiling(double value);

// Number formats an axis value with no more decimals than `step` needs.
std::string Number(double value, double step);

// XAxis draws the bottom edge of `frame`, vertical grid lines and labels at
// `ticks` (x pixels), and `title` centred below.
std::string XAxis(const Frame& frame, const std::vector<Tick>& ticks, absl::string_view title);

// YAxis draws the left edge of `frame`, horizontal grid lines and labels at
// `ticks` (y pixels), and `title` rotated on the left (empty: none).
std::string YAxis(const Frame& frame, const std::vector<Tick>& ticks, absl::string_view title);

// OpenSvg returns the opening tag of a chart: <svg class="chart" id="`id`">
// `width` x `height` pixels, with `label` (escaped) as its accessible name.
std::string OpenSvg(absl::string_view id, double width, double height,
                    absl::string_view label);

// Text returns an escaped <text> element; `anchor` is start|middle|end.
std::string Text(double x, double y, absl::string_view text, absl::string_view anchor,
                 absl::string_view css_class);

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_SVG_AXES_H_
