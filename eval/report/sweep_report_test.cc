#include "eval/report/sweep_report.h"

#include <sstream>
#include <string>

#include "eval/report/internal/example_report.h"
#include "eval/report/sweep_html.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

using report_internal::ExampleSweep;

std::string Text(const v1::SweepReport& sweep, SweepLayout layout) {
  std::ostringstream out;
  EXPECT_TRUE(WriteSweepText(sweep, layout, out).ok());
  return out.str();
}

TEST(SweepReport, TextHasARowPerCombinationAndPolicy) {
  const std::string text = Text(ExampleSweep(), SweepLayout::kSweep);
  EXPECT_THAT(text, HasSubstr("sweep:     workload:hackbench over "
                              "affinity_timeout_epochs: 2 combinations\n"));
  EXPECT_THAT(text, ContainsRegex("\n +1  full-scan +\\| +8\\.0 +8 \\| +10 \\| +100\\.00\n"));
  EXPECT_THAT(text, ContainsRegex("\n +1  visited-scan \\| +3\\.6 +3 \\| +10 \\| +90\\.00\n"));
  // No decisions: "-", as in the ab table.
  EXPECT_THAT(text, ContainsRegex("\n +5  visited-scan \\| +3\\.6 +3 \\| +10 \\| +-\n"));
}

TEST(SweepReport, HackbenchLayoutIsTheSeedsRowPerGroupsAndFds) {
  v1::SweepReport sweep = ExampleSweep();
  sweep.clear_axes();
  v1::SweepAxis& groups = *sweep.add_axes();
  groups.set_key("groups");
  groups.add_values("1");
  v1::SweepAxis& fds = *sweep.add_axes();
  fds.set_key("fds");
  fds.add_values("2");
  fds.add_values("4");
  sweep.mutable_rows(0)->set_values(0, "1");
  sweep.mutable_rows(0)->add_values("2");
  sweep.mutable_rows(1)->set_values(0, "1");
  sweep.mutable_rows(1)->add_values("4");
  const std::string text = Text(sweep, SweepLayout::kHackbench);
  EXPECT_THAT(text, ContainsRegex("MODE +GROUPS +FDS \\| CPUs/scan +p50 +agree"));
  EXPECT_THAT(text, ContainsRegex(
      "\nthreads +1 +2 \\| +8\\.0 +8 +100\\.00 \\| +3\\.6 +3 +90\\.00\n"));
  EXPECT_THAT(text, ContainsRegex("\nthreads +1 +4 \\| .* \\| +3\\.6 +3 +-\n"));
  std::ostringstream out;
  EXPECT_TRUE(absl::IsInvalidArgument(
      WriteSweepText(ExampleSweep(), SweepLayout::kHackbench, out)));
}

TEST(SweepReport, CsvCarriesTheValuesByKey) {
  std::ostringstream csv;
  ASSERT_TRUE(WriteSweepCsv(ExampleSweep(), csv).ok());
  EXPECT_THAT(csv.str(), HasSubstr("affinity_timeout_epochs,policy,"
                                   "cpus_scanned_mean,cpus_scanned_p50,scans,"
                                   "agreement_pct\n1,full-scan,8.0,8,10,100.00\n"));
}

TEST(SweepReport, RefusesRowsThatDoNotMatchTheAxes) {
  v1::SweepReport sweep = ExampleSweep();
  sweep.mutable_rows(1)->add_values("extra");
  std::ostringstream out;
  absl::Status status = WriteSweepCsv(sweep, out);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("rows[1] has 2 values for 1 axes"));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteSweepCsv(v1::SweepReport{}, out)));
}

TEST(SweepReport, RefusesRowsWithOtherPolicies) {
  v1::SweepReport sweep = ExampleSweep();
  sweep.mutable_rows(1)->mutable_policies(1)->set_policy("none");
  std::ostringstream out;
  absl::Status status = WriteSweepText(sweep, SweepLayout::kSweep, out);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("rows[1] has no policies or other "
                                          "policies than rows[0]"));
}

TEST(SweepHtml, ChartsEachKeyWithALinePerPolicyAndPanel) {
  std::ostringstream out;
  ASSERT_TRUE(WriteSweepHtml(ExampleSweep(), out).ok());
  const std::string html = out.str();
  EXPECT_THAT(html, HasSubstr("id=\"sweep-affinity_timeout_epochs\""));
  // Agreement panel: plot 30..190 px, 0..100 %; x centres of 2 values in
  // 80 + 796 px: 279 and 677. visited-scan at 90% sits at 190 - 0.9 * 160
  // = 46; its second point has no agreement, so the line stops there.
  EXPECT_THAT(html, HasSubstr("data-policy=\"visited-scan\" d=\"M279.0 46.0 \""));
  EXPECT_THAT(html, HasSubstr("data-policy=\"full-scan\" d=\"M279.0 30.0 L677.0 30.0 \""));
  // CPUs panel (second, 238 px lower, top 8 -> ceiling 10): full-scan at 8
  // is 238 + 190 - 0.8 * 160 = 300.
  EXPECT_THAT(html, HasSubstr("d=\"M279.0 300.0 L677.0 300.0 \""));
  // Each point has its dot, so visited-scan's lone agreement point shows.
  EXPECT_THAT(html, HasSubstr("<circle class=\"point\" data-policy=\"visited-scan\" "
                              "cx=\"279.0\" cy=\"46.0\""));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace schedcache
