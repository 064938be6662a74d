// Renders the HTML reports (the A/B's and the sweep's) in headless Chromium
// (Debian's `chromium`) to prove that a real browser builds the charts from
// them, and leaves screenshots in the test's temporary directory for a
// human to look at.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "eval/report/html_report.h"
#include "eval/report/internal/example_report.h"
#include "eval/report/internal/test_util.h"
#include "eval/report/sweep_html.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::RunCommand;

constexpr char kChromium[] = "/usr/bin/chromium";

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// ExpectCounts checks that `dom` holds each needle exactly as many times as
// it is paired with.
void ExpectCounts(const std::string& dom,
                  std::initializer_list<std::pair<std::string, size_t>> expected) {
  for (const auto& [needle, count] : expected) EXPECT_EQ(Count(dom, needle), count) << needle;
}

class HtmlReportInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kChromium)) {
      GTEST_SKIP() << kChromium << " is absent (Debian package `chromium`)";
    }
    // One folder (and so one Chromium profile) per test case: CTest runs
    // the cases in parallel, and two browsers on one profile fail.
    const ::testing::TestInfo* test =
        ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = absl::StrCat(::testing::TempDir(), "/html_report_chromium_",
                        test->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  // WriteReport writes `report` as HTML and returns its path.
  std::string WriteReport(const v1::AbReport& report, const std::string& name) {
    return Write(name, [&](std::ostream& out) { return WriteHtml(report, out); });
  }
  std::string WriteReport(const v1::SweepReport& report, const std::string& name) {
    return Write(name, [&](std::ostream& out) { return WriteSweepHtml(report, out); });
  }

  // Chromium runs `flags` on file://`path` with a private profile and no
  // network chatter; returns what it prints on stdout.
  absl::StatusOr<std::string> Chromium(const std::string& flags, const std::string& path) {
    return RunCommand(absl::StrCat(
        kChromium,
        " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
        " --disable-background-networking --disable-component-update --disable-sync"
        " --user-data-dir=",
        dir_, "/profile ", flags, " file://", path, " 2>", dir_, "/chromium.log"));
  }

  // ExpectScreenshotNotBlank has Chromium screenshot `path` into
  // `name`.png and checks that the picture holds more than a blank page.
  void ExpectScreenshotNotBlank(const std::string& path, const std::string& name) {
    const std::string png = absl::StrCat(dir_, "/", name, ".png");
    std::filesystem::remove(png);
    absl::StatusOr<std::string> printed =
        Chromium(absl::StrCat("--screenshot=", png, " --window-size=1200,3200"), path);
    ASSERT_TRUE(printed.ok()) << printed.status();
    ASSERT_TRUE(std::filesystem::exists(png)) << png;
    // A blank 1200x3200 page compresses to a few kilobytes; text, tables
    // and charts do not.
    EXPECT_GT(std::filesystem::file_size(png), 40'000u) << png;
  }

 private:
  std::string Write(const std::string& name,
                    const std::function<absl::Status(std::ostream&)>& write) {
    const std::string path = absl::StrCat(dir_, "/", name, ".html");
    std::ofstream out(path);
    EXPECT_TRUE(write(out).ok());
    return path;
  }

  std::string dir_;
};

TEST_F(HtmlReportInChromium, DomHasBothChartsWithTheirBarsAndLines) {
  const std::string path = WriteReport(report_internal::ExampleReport(), "example");
  absl::StatusOr<std::string> dom = Chromium("--dump-dom", path);
  ASSERT_TRUE(dom.ok()) << dom.status();
  ExpectCounts(*dom, {{"<svg class=\"chart\" id=\"cpus-scanned\"", 1},
                      {"<svg class=\"chart\" id=\"llc-over-time\"", 1},
                      // One bar per histogram bin (1 + 3), one step line per
                      // policy for each of the two processes with a time
                      // series.
                      {"<rect class=\"bar\"", 4},
                      {"<path class=\"step\"", 4},
                      // The topology view: 2 LLCs in each of the 2 policy
                      // panels, and the 3 preferred-LLC markers
                      // html_report_test derives.
                      {"<svg class=\"chart\" id=\"topology\"", 1},
                      {"<rect class=\"llc\"", 4},
                      {"<g class=\"pref\"", 3}});
  // The browser parsed the escaped comm back to its text.
  EXPECT_NE(dom->find("a&lt;b&amp;c"), std::string::npos);
}

// A report shaped like the seed's Redis run: 384 CPUs in 24 LLCs (12 per
// package and node), a full scan of every CPU against visited scans of a
// few LLCs.
v1::AbReport RedisLikeReport() {
  v1::AbReport report = report_internal::ExampleReport();
  report.mutable_input()->set_topology("2 packages, 24 LLCs, 384 CPUs");
  auto add_bin = [](v1::AbPolicy& policy, int64_t cpus, uint64_t scans) {
    v1::AbHistogramBin& bin = *policy.add_cpus_scanned_histogram();
    bin.set_cpus_scanned(cpus);
    bin.set_scans(scans);
  };
  v1::AbPolicy& full = *report.mutable_policies(0);
  full.clear_cpus_scanned_histogram();
  add_bin(full, 384, 5000);
  v1::Distribution& cpus_scanned = *full.mutable_report()->mutable_cpus_scanned();
  cpus_scanned.set_count(5000);
  cpus_scanned.set_mean(384);
  cpus_scanned.set_p50(384);
  cpus_scanned.set_p99(384);
  cpus_scanned.set_max(384);
  v1::AbPolicy& visited = *report.mutable_policies(1);
  visited.clear_cpus_scanned_histogram();
  for (int64_t cpus = 1; cpus <= 64; ++cpus) {
    add_bin(visited, cpus, static_cast<uint64_t>(400 / (1 + (cpus - 14) * (cpus - 14) / 8)));
  }
  add_bin(visited, 384, 40);
  report.clear_llcs();
  for (int llc = 0; llc < 24; ++llc) {
    v1::AbLlcPlace& place = *report.add_llcs();
    place.set_llc(llc);
    place.set_package(llc / 12);
    place.set_numa_node(llc / 12);
    place.set_cpus(16);
  }
  auto add_occupancy = [](v1::AbScanOccupancy& scan, int llc, uint64_t occupancy) {
    v1::LlcOccupancy& o = *scan.add_llcs();
    o.set_llc(llc);
    o.set_occupancy(occupancy);
  };
  v1::AbLastScan& last = *report.mutable_busiest_last_scan();
  last.Clear();
  last.set_tgid(1000);
  v1::AbScanOccupancy& full_scan = *last.add_per_policy();
  for (int llc = 0; llc < 24; ++llc) {
    add_occupancy(full_scan, llc, uint64_t{40000} * (llc % 5));
  }
  v1::AbScanOccupancy& visited_scan = *last.add_per_policy();
  add_occupancy(visited_scan, 0, 200000);
  add_occupancy(visited_scan, 4, 90000);
  const int64_t s = report_internal::kExampleStartNs;
  auto add_change = [](v1::AbTimeline& timeline, int64_t t, int llc) {
    v1::AbLlcChange& change = *timeline.add_changes();
    change.set_timestamp_ns(t);
    change.set_llc(llc);
  };
  for (int k = 0; k < 6; ++k) {
    v1::AbProcess& p = *report.add_processes();
    p.set_tgid(1000 + k);
    p.set_comm(k == 0 ? "redis-server" : "valkey-benchmar");
    p.set_runtime_ns(int64_t{900'000'000} - k * 100'000'000);
    p.add_final_preferred_llc(k);
    p.add_final_preferred_llc(k);
    v1::AbTimeline& first = *p.add_preferred_llc_over_time();
    v1::AbTimeline& second = *p.add_preferred_llc_over_time();
    for (int step = 0; step < 5; ++step) {
      const int64_t t = s + step * 200'000'000 + k * 10'000'000;
      add_change(first, t, (k * 4 + step) % 24);
      add_change(second, t + 50'000'000, (k * 4 + step / 2) % 24);
    }
  }
  return report;
}

// The grid of the 384-CPU shape: 24 LLCs in each of the 2 policy panels.
// Markers go to the first kMaxTimelines processes in the report's order:
// ExampleReport's three (redis-server at LLC 1 twice, a<b&c at LLC 0 under
// full-scan only, the third none) and tgids 1000-1002 (LLCs 0, 1, 2 under
// both policies): 2 + 1 + 0 + 3 * 2 = 9.
TEST_F(HtmlReportInChromium, DomHasTheTopologyGridOfTheRedisShape) {
  const std::string path = WriteReport(RedisLikeReport(), "redis-like");
  absl::StatusOr<std::string> dom = Chromium("--dump-dom", path);
  ASSERT_TRUE(dom.ok()) << dom.status();
  ExpectCounts(*dom, {{"<rect class=\"llc\"", 48}, {"<g class=\"pref\"", 9}});
  EXPECT_NE(dom->find("package 1 / node 1"), std::string::npos);
}

TEST_F(HtmlReportInChromium, ScreenshotsAreNotBlank) {
  for (const auto& [name, report] :
       {std::pair{"example", report_internal::ExampleReport()},
        std::pair{"redis-like", RedisLikeReport()}}) {
    ExpectScreenshotNotBlank(WriteReport(report, name), name);
  }
}

// The sweep of ExampleSweep: one key, so one chart; two panels (agreement,
// CPUs scanned) with a line per policy in each: 4 lines, and a dot per
// point: 2 values x 2 policies x 2 panels, less visited-scan's agreement
// at timeout 5 (no decisions): 7. Its table has a row per combination (2)
// and policy (2) under the heading row: 5 rows.
TEST_F(HtmlReportInChromium, SweepHasAChartPerKeyWithALinePerPolicyAndPanel) {
  const std::string path = WriteReport(report_internal::ExampleSweep(), "sweep");
  absl::StatusOr<std::string> dom = Chromium("--dump-dom", path);
  ASSERT_TRUE(dom.ok()) << dom.status();
  ExpectCounts(*dom, {{"<svg class=\"chart\"", 1},
                      {"id=\"sweep-affinity_timeout_epochs\"", 1},
                      {"<path class=\"line\"", 4},
                      {"<circle class=\"point\"", 7},
                      {"<table class=\"sweep\"", 1},
                      {"<tr>", 5}});
  ExpectScreenshotNotBlank(path, "sweep");
}

}  // namespace
}  // namespace schedcache
