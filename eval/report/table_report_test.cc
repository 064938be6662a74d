#include "eval/report/table_report.h"

#include <sstream>
#include <string>

#include "eval/report/internal/example_result.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::ExampleResult;

// The expected text is laid out by hand from the column widths: each column
// is as wide as its widest cell or heading; "scan time (us)" (14) is wider
// than its two columns ("mean" 4 + gap 2 + "2.50" 4 = 10), so its first
// column grows by 4; group headings are centred; groups are joined by " | ".
TEST(TextReport, PrintsInputSummaryAndAlignedTable) {
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(ExampleResult(), out).ok());
  EXPECT_EQ(out.str(),
            "input:     workload:redis seed=1\n"
            "topology:  1 package, 2 LLCs, 8 CPUs (builtin:test-8)\n"
            "samples:   1000 samples, 200 hand-overs, 2 malformed lines, "
            "1.000000 s at HZ 250\n"
            "malformed: garbage line\n"
            "malformed: bad, \"quoted\"\n"
            "\n"
            "             |    CPUs scanned     |           scans            | "
            "scan time (us) |    vs full-scan     |     preferred LLC\n"
            "policy       | mean  p50  p99  max | executed  skipped  aborted | "
            "    mean   p99 | decisions  agree(%) | changes  runtime on(%)\n"
            "-------------+---------------------+----------------------------+-"
            "---------------+---------------------+-----------------------\n"
            "full-scan    |  8.0    8    8    8 |       10        5        1 | "
            "    1.50  2.50 |        10    100.00 |       2          75.00\n"
            "visited-scan |  3.6    3    8    8 |       10        5        1 | "
            "    0.52  1.25 |        10     90.00 |       3          68.75\n");
}

TEST(TextReport, RejectsResultWithoutPolicies) {
  AbResult result = ExampleResult();
  result.policies.clear();
  std::ostringstream out;
  absl::Status status = WriteTextReport(result, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("policies"), std::string::npos);
}

TEST(TextReport, RejectsProcessWithWrongNumberOfFinalLlcs) {
  AbResult result = ExampleResult();
  result.processes[1].final_preferred_llc = {0};
  std::ostringstream out;
  absl::Status status = WriteTextReport(result, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("tgid=200"), std::string::npos);
}

TEST(TextReport, ReportsDataLossWhenStreamFails) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_EQ(WriteTextReport(ExampleResult(), out).code(), absl::StatusCode::kDataLoss);
}

TEST(Csv, WritesHeaderAndOneRowPerPolicy) {
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(ExampleResult(), out).ok());
  EXPECT_EQ(out.str(),
            "policy,cpus_scanned_mean,cpus_scanned_p50,cpus_scanned_p99,"
            "cpus_scanned_max,scans,scans_skipped,scans_aborted,scan_us_mean,"
            "scan_us_p99,decisions,agreement_pct,preferred_llc_changes,"
            "runtime_on_preferred_llc_pct\n"
            "full-scan,8.0,8,8,8,10,5,1,1.50,2.50,10,100.00,2,75.00\n"
            "visited-scan,3.6,3,8,8,10,5,1,0.52,1.25,10,90.00,3,68.75\n");
}

// A policy with no decisions has no agreement share: "-", not 100.00.
TEST(TextReport, ShowsDashForAgreementWithoutDecisions) {
  AbResult result = ExampleResult();
  result.policies[1].report.decisions = 0;
  result.policies[1].report.agreement = std::nullopt;
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(result, out).ok());
  EXPECT_NE(out.str().find("|         0         - |"), std::string::npos)
      << out.str();
}

TEST(Csv, ShowsDashForAgreementWithoutDecisions) {
  AbResult result = ExampleResult();
  result.policies[1].report.decisions = 0;
  result.policies[1].report.agreement = std::nullopt;
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(result, out).ok());
  EXPECT_NE(out.str().find("visited-scan,3.6,3,8,8,10,5,1,0.52,1.25,0,-,3,"),
            std::string::npos)
      << out.str();
}

TEST(Csv, QuotesFieldsWithCommasAndQuotes) {
  AbResult result = ExampleResult();
  result.policies[1].report.name = "odd,\"name\"";
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(result, out).ok());
  EXPECT_NE(out.str().find("\n\"odd,\"\"name\"\"\",3.6,"), std::string::npos);
}

}  // namespace
}  // namespace schedcache
