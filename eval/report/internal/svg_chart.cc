#include "eval/report/internal/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "eval/report/internal/html_escape.h"
#include "eval/report/internal/svg_axes.h"
#include "eval/report/scan_event.h"

namespace schedcache::report_internal {
namespace {

constexpr double kWidth = 900;
constexpr double kLeft = 80;   // room for y tick labels and the y title
constexpr double kRight = 24;
constexpr double kTitleHeight = 30;
constexpr double kAxisHeight = 48;  // x tick labels and the x title

using Timeline = google::protobuf::RepeatedPtrField<v1::AbLlcChange>;

uint64_t TotalScans(const v1::AbPolicy& policy) {
  uint64_t total = 0;
  for (const v1::AbHistogramBin& bin : policy.cpus_scanned_histogram()) total += bin.scans();
  return total;
}

// MaxShare returns the largest share of `policy`'s scans (%) in one bin,
// or 100 when it has none.
double MaxShare(const v1::AbPolicy& policy) {
  const uint64_t total = TotalScans(policy);
  double share = 0;
  for (const v1::AbHistogramBin& bin : policy.cpus_scanned_histogram()) {
    share = std::max(share, 100.0 * static_cast<double>(bin.scans()) / static_cast<double>(total));
  }
  return share > 0 ? share : 100;
}

// Bars returns one policy's bars in `frame`; x_of maps CPUs scanned to x.
template <typename XOf>
std::string Bars(const v1::AbPolicy& policy, size_t index, const Frame& frame, double y_top,
                 XOf x_of) {
  const auto& bins = policy.cpus_scanned_histogram();
  const uint64_t total = TotalScans(policy);
  std::string svg;
  for (int b = 0; b < bins.size(); ++b) {
    // As wide as the gap to the nearest neighbour allows, so bars at 380
    // and 384 CPUs stay apart on the log axis.
    const double x = x_of(bins[b].cpus_scanned());
    double gap = 16;
    if (b > 0) gap = std::min(gap, x - x_of(bins[b - 1].cpus_scanned()));
    if (b + 1 < bins.size()) gap = std::min(gap, x_of(bins[b + 1].cpus_scanned()) - x);
    const double width = std::max(2.0, 0.8 * gap);
    const double share = 100.0 * static_cast<double>(bins[b].scans()) / static_cast<double>(total);
    const double height = share / y_top * frame.height;
    absl::StrAppendFormat(
        &svg,
        "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
        "fill=\"%s\"><title>%s: %d scans of %d CPUs (%.1f%%)</title></rect>\n",
        x - width / 2, frame.bottom() - height, width, height, PolicyColor(index),
        HtmlEscape(policy.report().policy()), bins[b].scans(), bins[b].cpus_scanned(), share);
  }
  return svg;
}

// Timelines returns the processes with a time series, busiest first.
std::vector<const v1::AbProcess*> Timelines(const v1::AbReport& report) {
  std::vector<const v1::AbProcess*> chosen;
  for (const v1::AbProcess& p : report.processes()) {
    if (!p.preferred_llc_over_time().empty()) chosen.push_back(&p);
  }
  std::stable_sort(chosen.begin(), chosen.end(), [](const auto* a, const auto* b) {
    return a->runtime_ns() > b->runtime_ns();
  });
  if (chosen.size() > kMaxTimelines) chosen.resize(kMaxTimelines);
  return chosen;
}

// TimeDomain is the span the time axis covers, in the samples' clock.
struct TimeDomain {
  int64_t begin = 0;
  int64_t end = 1;
};

TimeDomain DomainOf(const v1::AbReport& report, const std::vector<const v1::AbProcess*>& shown) {
  const v1::AbInput& in = report.input();
  TimeDomain d{in.start_ns(), in.start_ns() + in.duration_ns()};
  for (const v1::AbProcess* p : shown) {
    for (const v1::AbTimeline& series : p->preferred_llc_over_time()) {
      for (const v1::AbLlcChange& c : series.changes()) {
        d.begin = std::min(d.begin, c.timestamp_ns());
        d.end = std::max(d.end, c.timestamp_ns());
      }
    }
  }
  if (d.end <= d.begin) d.end = d.begin + 1;
  return d;
}

// StepPath draws one policy's preferred LLC as a step line from its first
// change point to the end of the domain; y_of maps an LLC (or
// kNoPreferredLlc) to y. An empty series never held a preference.
template <typename XOf, typename YOf>
std::string StepPath(const Timeline& series, const TimeDomain& domain,
                     size_t index, absl::string_view policy, XOf x_of, YOf y_of) {
  std::string d;
  if (series.empty()) {
    d = absl::StrFormat("M%.1f %.1f", x_of(domain.begin), y_of(kNoPreferredLlc));
  }
  for (int c = 0; c < series.size(); ++c) {
    if (c == 0) {
      absl::StrAppendFormat(&d, "M%.1f %.1f", x_of(series[c].timestamp_ns()), y_of(series[c].llc()));
    } else {
      absl::StrAppendFormat(&d, "H%.1f V%.1f", x_of(series[c].timestamp_ns()), y_of(series[c].llc()));
    }
  }
  absl::StrAppendFormat(&d, "H%.1f", x_of(domain.end));
  return absl::StrFormat(
      "<path class=\"step\" data-policy=\"%s\" d=\"%s\" stroke=\"%s\"><title>%s</title></path>\n",
      HtmlEscape(policy), d, PolicyColor(index), HtmlEscape(policy));
}

// LlcTicks labels the lanes: "none" at the bottom, then LLC 0, 1, ...;
// at most about 16 labels, however many LLCs.
template <typename YOf>
std::vector<Tick> LlcTicks(int max_llc, YOf y_of) {
  const int every = (max_llc + 2 + 15) / 16;
  std::vector<Tick> ticks = {{y_of(kNoPreferredLlc), "none"}};
  for (int llc = 0; llc <= max_llc; llc += every) ticks.push_back({y_of(llc), absl::StrCat(llc)});
  return ticks;
}

std::vector<Tick> TimeTicks(const TimeDomain& domain, const Frame& frame) {
  const double seconds = static_cast<double>(domain.end - domain.begin) / 1e9;
  const double step = NiceCeiling(seconds / 6);
  std::vector<Tick> ticks;
  for (int k = 0; k * step <= seconds * (1 + 1e-9); ++k) {
    ticks.push_back({frame.left + k * step / seconds * frame.width, Number(k * step, step)});
  }
  return ticks;
}

}  // namespace

std::string PolicyLegend(const std::vector<std::string>& policies) {
  std::string html = "<div class=\"legend\">";
  for (size_t i = 0; i < policies.size(); ++i) {
    absl::StrAppendFormat(&html,
                          "<span class=\"key\"><span class=\"swatch\" "
                          "style=\"background:%s\"></span>%s</span>",
                          PolicyColor(i), HtmlEscape(policies[i]));
  }
  return absl::StrCat(html, "</div>\n");
}

std::string PolicyLegend(const v1::AbReport& report) {
  std::vector<std::string> policies;
  for (const v1::AbPolicy& policy : report.policies()) {
    policies.push_back(policy.report().policy());
  }
  return PolicyLegend(policies);
}

std::string CpusScannedChart(const v1::AbReport& report) {
  int64_t max_value = 2;
  for (const v1::AbPolicy& policy : report.policies()) {
    for (const v1::AbHistogramBin& bin : policy.cpus_scanned_histogram()) {
      max_value = std::max(max_value, bin.cpus_scanned());
    }
  }
  // Half a power of two of room on the left and at least that on the right,
  // so bars at 1 CPU and at the largest value stay inside the plot.
  const int log_top = static_cast<int>(std::floor(std::log2(static_cast<double>(max_value)))) + 1;
  constexpr double kLogBottom = -0.5;
  const double plot_height = 120;
  const double panel_height = kTitleHeight + plot_height + kAxisHeight;
  std::string svg = OpenSvg("cpus-scanned", kWidth, panel_height * report.policies_size(),
                            "distribution of CPUs scanned per scan, per policy");
  for (int i = 0; i < report.policies_size(); ++i) {
    const v1::AbPolicy& policy = report.policies(i);
    const Frame frame{kLeft, i * panel_height + kTitleHeight, kWidth - kLeft - kRight,
                      plot_height};
    // A scan examines at least one CPU; 0 would sit at the axis origin.
    auto x_of = [&](int64_t cpus) {
      const double log = std::log2(static_cast<double>(std::max<int64_t>(cpus, 1)));
      return frame.left + (log - kLogBottom) / (log_top - kLogBottom) * frame.width;
    };
    std::vector<Tick> x_ticks;
    for (int p = 0; p <= log_top; ++p) x_ticks.push_back({x_of(int64_t{1} << p), absl::StrCat(int64_t{1} << p)});
    // Each panel scales to its own tallest bar: a policy that always scans
    // the same number of CPUs would otherwise flatten the others' spread.
    const double y_top = NiceCeiling(MaxShare(policy));
    std::vector<Tick> y_ticks;
    for (double v : {0.0, y_top / 2, y_top}) {
      y_ticks.push_back({frame.bottom() - v / y_top * frame.height,
                         absl::StrCat(Number(v, y_top / 2), "%")});
    }
    const v1::PolicyReport& r = policy.report();
    absl::StrAppend(
        &svg,
        Text(frame.left, frame.top - 10,
             absl::StrFormat("%s: %d scans, CPUs scanned mean %.1f, p99 %d, max %d", r.policy(),
                             r.scans(), r.cpus_scanned().mean(), r.cpus_scanned().p99(),
                             r.cpus_scanned().max()),
             "start", "panel-title"),
        YAxis(frame, y_ticks, "share of scans"),
        XAxis(frame, x_ticks, "CPUs scanned per scan (log2 scale)"),
        Bars(policy, i, frame, y_top, x_of));
  }
  return absl::StrCat(svg, "</svg>\n");
}

std::string LlcOverTimeChart(const v1::AbReport& report) {
  const std::vector<const v1::AbProcess*> shown = Timelines(report);
  if (shown.empty()) {
    return absl::StrCat(OpenSvg("llc-over-time", kWidth, 40, "no preferred-LLC time series"),
                        Text(kLeft, 24, "no time series were recorded", "start", "note"),
                        "</svg>\n");
  }
  int max_llc = 0;
  for (const v1::AbProcess* p : shown) {
    for (const v1::AbTimeline& series : p->preferred_llc_over_time()) {
      for (const v1::AbLlcChange& c : series.changes()) max_llc = std::max(max_llc, c.llc());
    }
  }
  const int lanes = max_llc + 2;  // "none" and LLCs 0..max_llc
  const double plot_height = std::clamp(lanes * 14.0, 72.0, 340.0);
  const double lane_height = plot_height / lanes;
  const double panel_height = kTitleHeight + plot_height + kAxisHeight;
  const TimeDomain domain = DomainOf(report, shown);
  const int n = report.policies_size();
  std::string svg = OpenSvg("llc-over-time", kWidth, panel_height * shown.size(),
                            "preferred LLC over time of the busiest processes");
  for (size_t k = 0; k < shown.size(); ++k) {
    const v1::AbProcess& p = *shown[k];
    const Frame frame{kLeft, k * panel_height + kTitleHeight, kWidth - kLeft - kRight,
                      plot_height};
    auto x_of = [&](int64_t t) {
      return frame.left + static_cast<double>(t - domain.begin) /
                              static_cast<double>(domain.end - domain.begin) * frame.width;
    };
    auto y_of = [&](int llc) { return frame.bottom() - (llc + 1.5) * lane_height; };
    absl::StrAppend(
        &svg,
        Text(frame.left, frame.top - 10,
             absl::StrFormat("%s (tgid %d), runtime %.1f ms", p.comm(), p.tgid(),
                             static_cast<double>(p.runtime_ns()) / 1e6),
             "start", "panel-title"),
        YAxis(frame, LlcTicks(max_llc, y_of), "preferred LLC"),
        XAxis(frame, TimeTicks(domain, frame), "time since the first sample (s)"));
    // Policies that agree would draw the same line; a small vertical offset
    // per policy keeps every line visible.
    const double spread = std::min(3.0, lane_height / (n + 1));
    for (int i = 0; i < n; ++i) {
      const double dy = (static_cast<double>(i) - (n - 1) / 2.0) * spread;
      absl::StrAppend(&svg, StepPath(p.preferred_llc_over_time(i).changes(), domain, i,
                                     report.policies(i).report().policy(), x_of,
                                     [&](int llc) { return y_of(llc) + dy; }));
    }
  }
  return absl::StrCat(svg, "</svg>\n");
}

}  // namespace schedcache::report_internal
