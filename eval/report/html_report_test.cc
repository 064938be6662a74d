#include "eval/report/html_report.h"

#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "eval/report/internal/example_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::ExampleReport;
using report_internal::PolicyOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string HtmlOf(const v1::AbReport& report) {
  std::ostringstream out;
  EXPECT_TRUE(WriteHtml(report, out).ok());
  return out.str();
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, ShowsDashForAgreementWithoutDecisions) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 1).set_decisions(0);
  PolicyOf(report, 1).clear_agreement();
  EXPECT_THAT(HtmlOf(report),
              HasSubstr("<td class=\"num first\">0</td><td class=\"num\">-</td>"));
}

// The cost table's cells are the text report's (table_report_test derives
// them), in their own section after the caption.
TEST(HtmlReport, ShowsTheCostTableBesideTheSeedsFigures) {
  const std::string html = HtmlOf(ExampleReport());
  EXPECT_THAT(html, HasSubstr("<section id=\"cost\"><h2>Cost of the scans</h2><p>cost over "
                              "1.201000 s of simulated CPU time"));
  EXPECT_THAT(html, HasSubstr("<th class=\"group\" colspan=\"4\">seed: kernel "
                              "task_cache_work, % of cycles</th>"));
  EXPECT_THAT(html, HasSubstr("<tr><td class=\"text first\">visited-scan</td>"
                              "<td class=\"num first\">36</td><td class=\"num\">30.0</td>"
                              "<td class=\"num\">0.450x</td><td class=\"num first\">5.20</td>"
                              "<td class=\"num\">0.000433</td><td class=\"num\">0.347x</td>"
                              "<td class=\"num first\">0.02</td><td class=\"num\">0.0247x</td>"
                              "<td class=\"num\">0.03</td><td class=\"num\">0.231x</td></tr>"));
  EXPECT_EQ(Count(html, "<table class=\"cost\">"), 1u);
}

TEST(HtmlReport, EscapesCommsAndInputText) {
  v1::AbReport report = ExampleReport();
  report.mutable_input()->set_description("trace:/tmp/<x>&y.txt");
  PolicyOf(report, 1).set_policy("v<i>s");
  const std::string html = HtmlOf(report);
  EXPECT_THAT(html, HasSubstr("<td>a&lt;b&amp;c</td>"));
  EXPECT_THAT(html, HasSubstr("a&lt;b&amp;c (tgid 200)"));  // the chart's panel title
  EXPECT_THAT(html, HasSubstr("trace:/tmp/&lt;x&gt;&amp;y.txt"));
  EXPECT_THAT(html, HasSubstr("<td>idle, &quot;x&quot;</td>"));
  EXPECT_THAT(html, HasSubstr("v&lt;i&gt;s"));
  EXPECT_THAT(html, Not(HasSubstr("a<b")));
  EXPECT_THAT(html, Not(HasSubstr("<i>")));
}

TEST(HtmlReport, DrawsOneBarPerHistogramBinAndOneStepLinePerPolicyAndProcess) {
  const std::string html = HtmlOf(ExampleReport());
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\" id=\"cpus-scanned\""));
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\" id=\"llc-over-time\""));
  // full-scan has one bin, visited-scan three.
  EXPECT_EQ(Count(html, "<rect class=\"bar\""), 4u);
  // Two processes have time series, two policies each; the third has none.
  EXPECT_EQ(Count(html, "<path class=\"step\""), 4u);
}

// redis-server's panel, derived by hand: the plot spans x 80..876 (900 wide,
// margins 80 and 24) and the time domain 2.0 s..3.0 s (start, duration 1 s).
// LLCs 0..1 plus "none" make 3 lanes; 3 * 14 = 42 is below the 72 minimum,
// so lanes are 24 high in a plot from y 30 to 102 (title 30). Lane centres:
// none 90, LLC 0 66, LLC 1 42. Two policies are spread by min(3, 24/3) = 3,
// i.e. -1.5 and +1.5. full-scan: LLC 0 from 2.0 s, LLC 1 from 2.5 s (x 478).
// visited-scan: LLC 0, then LLC 1 from 2.6 s (x 80 + 0.6 * 796 = 557.6).
TEST(HtmlReport, StepLinesFollowTheChangePoints) {
  const std::string html = HtmlOf(ExampleReport());
  EXPECT_THAT(html, HasSubstr("data-policy=\"full-scan\" d=\"M80.0 64.5H478.0 V40.5H876.0\""));
  EXPECT_THAT(html,
              HasSubstr("data-policy=\"visited-scan\" d=\"M80.0 67.5H557.6 V43.5H876.0\""));
}

// The cache-group section comes after the cost table, with a row per
// group naming its members, and is absent when no sample named a group.
TEST(HtmlReport, ListsCacheGroupsOnlyWhenTheInputNamedSome) {
  v1::AbReport report = ExampleReport();
  std::ostringstream plain;
  ASSERT_TRUE(WriteHtml(report, plain).ok());
  EXPECT_EQ(plain.str().find("id=\"cache-groups\""), std::string::npos);
  v1::AbCacheGroup& pair = *report.add_cache_groups();
  pair.set_id(3);
  pair.set_name("redis<pair>");
  pair.add_member_tgids(100);
  pair.add_member_tgids(200);
  for (int p = 0; p < report.policies_size(); ++p) {
    pair.add_final_preferred_llc(p);
  }
  std::ostringstream out;
  ASSERT_TRUE(WriteHtml(report, out).ok());
  const std::string html = out.str();
  const size_t section = html.find("<section id=\"cache-groups\">");
  ASSERT_NE(section, std::string::npos);
  EXPECT_LT(html.find("<section id=\"cost\">"), section);
  EXPECT_NE(html.find("redis&lt;pair&gt;", section), std::string::npos);
  EXPECT_NE(html.find(">100,200<", section), std::string::npos);
}

TEST(HtmlReport, FetchesNothing) {
  const std::string html = HtmlOf(ExampleReport());
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  // The only URL is the SVG namespace name, which is never fetched.
  EXPECT_EQ(Count(html, "://"), Count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST(HtmlReport, ListsTheFirstProcessesAndPointsToTheJsonForTheRest) {
  v1::AbReport report = ExampleReport();
  while (report.processes_size() < kHtmlMaxProcessRows + 2) {
    v1::AbProcess& filler = *report.add_processes();
    filler.set_tgid(9000 + report.processes_size() - 1);
    filler.set_comm("filler");
    filler.set_runtime_ns(1);
    filler.add_final_preferred_llc(-1);
    filler.add_final_preferred_llc(-1);
  }
  const std::string html = HtmlOf(report);
  EXPECT_EQ(Count(html, "<td>filler</td>"), kHtmlMaxProcessRows - 3u);
  EXPECT_THAT(html, HasSubstr("2 more processes are in the JSON report."));
}

// The topology view, by hand: one package and node, so one row of 2 cells
// per policy panel. A panel is 30 (title) + 50 (cell) + 4 + 4 = 88 high;
// cells start at x 140 and step by 56 + 4, so LLC 0 sits at x 140 and LLC 1
// at x 200, at y 30 in the full-scan panel and 88 + 30 = 118 below it.
// Shading: full-scan's last scan saw LLC 0 at 262144 and LLC 1 at 1048576,
// so 0.25 and 1.00; visited-scan's saw LLC 1 only (1.00; LLC 0 0.00).
// Markers: redis-server (1) prefers LLC 1 under both, a<b&c (2) LLC 0 under
// full-scan only, the third process none: 3 markers. The first sits at
// x 200 + 4 + 7 = 211, y 30 + 24 = 54.
TEST(HtmlReport, TopologyViewShadesTheLastScanAndMarksPreferredLlcs) {
  const std::string html = HtmlOf(ExampleReport());
  EXPECT_THAT(html, HasSubstr("<svg class=\"chart\" id=\"topology\" "
                              "xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" "
                              "height=\"176\""));
  EXPECT_EQ(Count(html, "<rect class=\"llc\""), 4u);
  EXPECT_THAT(html, HasSubstr("<rect class=\"llc\" data-llc=\"0\" x=\"140.0\" y=\"30.0\" "
                              "width=\"56\" height=\"50\" fill=\"#1f77b4\" "
                              "fill-opacity=\"0.25\""));
  EXPECT_THAT(html, HasSubstr("<rect class=\"llc\" data-llc=\"1\" x=\"200.0\" y=\"30.0\" "
                              "width=\"56\" height=\"50\" fill=\"#1f77b4\" "
                              "fill-opacity=\"1.00\""));
  EXPECT_THAT(html, HasSubstr("<rect class=\"llc\" data-llc=\"0\" x=\"140.0\" y=\"118.0\" "
                              "width=\"56\" height=\"50\" fill=\"#1f77b4\" "
                              "fill-opacity=\"0.00\""));
  EXPECT_THAT(html, HasSubstr("package 0 / node 0"));
  EXPECT_EQ(Count(html, "<g class=\"pref\""), 3u);
  EXPECT_EQ(Count(html, "<g class=\"pref\" data-tgid=\"100\""), 2u);
  EXPECT_THAT(html, HasSubstr("<g class=\"pref\" data-tgid=\"100\"><circle cx=\"211.0\" "
                              "cy=\"54.0\" r=\"7\""));
  EXPECT_THAT(html, HasSubstr("<span class=\"key\">2 = a&lt;b&amp;c (tgid 200)</span>"));
  EXPECT_THAT(html, HasSubstr("the last scan of redis-server (tgid 100) examined"));
}

TEST(HtmlReport, TopologyViewWithoutTheLastScanHasNoShading) {
  v1::AbReport report = ExampleReport();
  report.clear_busiest_last_scan();
  const std::string html = HtmlOf(report);
  EXPECT_EQ(Count(html, "fill-opacity=\"0.00\""), 4u);
  EXPECT_THAT(html, HasSubstr("No shading: the busiest process's last scan is not known"));
}

TEST(HtmlReport, TopologyViewNotesAResultWithoutLayout) {
  v1::AbReport report = ExampleReport();
  report.clear_llcs();
  const std::string html = HtmlOf(report);
  EXPECT_THAT(html, HasSubstr("id=\"topology\""));
  EXPECT_THAT(html, HasSubstr("this result holds no topology layout"));
  EXPECT_EQ(Count(html, "<rect class=\"llc\""), 0u);
}

TEST(HtmlReport, NotesWhenNoTimeSeriesWereRecorded) {
  v1::AbReport report = ExampleReport();
  for (v1::AbProcess& p : *report.mutable_processes()) p.clear_preferred_llc_over_time();
  const std::string html = HtmlOf(report);
  EXPECT_THAT(html, HasSubstr("id=\"llc-over-time\""));
  EXPECT_THAT(html, HasSubstr("no time series were recorded"));
  EXPECT_EQ(Count(html, "<path class=\"step\""), 0u);
}

}  // namespace
}  // namespace schedcache
