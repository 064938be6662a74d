#include "eval/report/scan_trace.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "eval/report/internal/test_util.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::ReadFile;
using report_internal::RunCommand;

TEST(ScanTraceLine, MatchesTheSeedsTraceLines) {
  // Both lines are copied from the seed's cover letter (patch v6).
  EXPECT_EQ(FormatScanTraceLine({0, "redis-server", 24660, 195, 2916'005989'000, 384}),
            "    redis-server-24660   [195] .....  2916.005989: sched_cache_scan: "
            "comm=redis-server pid=24660 scan=384");
  EXPECT_EQ(FormatScanTraceLine({1, "valkey-benchmar", 48198, 103, 2876'257909'999, 16}),
            " valkey-benchmar-48198   [103] .....  2876.257909: sched_cache_scan: "
            "comm=valkey-benchmar pid=48198 scan=16");
}

TEST(ScanTraceLine, PadsCpuToThreeDigitsAndTruncatesCommAsTheKernel) {
  EXPECT_EQ(FormatScanTraceLine({0, "valkey-benchmark", 7, 18, 1'000, 2}),
            " valkey-benchmar-7       [018] .....     0.000001: sched_cache_scan: "
            "comm=valkey-benchmar pid=7 scan=2");
}

TEST(ScanTracePath, InsertsPolicyBeforeTheExtension) {
  EXPECT_EQ(ScanTracePath("scans.txt", "full-scan"), "scans.full-scan.txt");
  EXPECT_EQ(ScanTracePath("out/x.tar.gz", "none"), "out/x.tar.none.gz");
  EXPECT_EQ(ScanTracePath("out.d/scans", "none"), "out.d/scans.none");
  EXPECT_EQ(ScanTracePath(".scans", "none"), ".scans.none");
}

TEST(ScanTraceWriter, WritesOneFilePerPolicyThatTheSeedsAnalysisReads) {
  const std::string base = absl::StrCat(::testing::TempDir(), "/scans.txt");
  absl::StatusOr<ScanTraceWriter> writer =
      ScanTraceWriter::Open(base, {"full-scan", "visited-scan"});
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_EQ(writer->paths().size(), 2u);
  EXPECT_EQ(writer->paths()[1], absl::StrCat(::testing::TempDir(), "/scans.visited-scan.txt"));
  ASSERT_TRUE(writer->Write({0, "redis-server", 10, 1, 5'000'000'000, 8}).ok());
  ASSERT_TRUE(writer->Write({1, "redis-server", 10, 1, 5'000'000'000, 2}).ok());
  ASSERT_TRUE(writer->Write({1, "redis-server", 11, 2, 5'004'000'000, 4}).ok());
  ASSERT_TRUE(writer->Close().ok());

  const std::string visited = ReadFile(writer->paths()[1]);
  EXPECT_EQ(visited,
            "# tracer: nop\n"
            "# schedcache ab: sched_cache_scan events of policy visited-scan (2 of 2);\n"
            "# the other policies are in sibling files named after them.\n"
            "#\n"
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
            "#              | |         |   |||||     |         |\n"
            "    redis-server-10      [001] .....     5.000000: sched_cache_scan: "
            "comm=redis-server pid=10 scan=2\n"
            "    redis-server-11      [002] .....     5.004000: sched_cache_scan: "
            "comm=redis-server pid=11 scan=4\n");
  // The seed's kind of analysis: count and mean of scan=; visited-scan has
  // scans of 2 and 4 CPUs (mean 3), full-scan one of 8.
  const std::string awk = " | awk -F'scan=' '{n++; s+=$2} END {print n, s/n}'";
  absl::StatusOr<std::string> stats =
      RunCommand(absl::StrCat("grep 'scan=' ", writer->paths()[1], awk));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(*stats, "2 3\n");
  stats = RunCommand(absl::StrCat("grep 'scan=' ", writer->paths()[0], awk));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(*stats, "1 8\n");
}

TEST(ScanTraceWriter, RejectsEventOfUnknownPolicy) {
  absl::StatusOr<ScanTraceWriter> writer =
      ScanTraceWriter::Open(absl::StrCat(::testing::TempDir(), "/unknown.txt"), {"none"});
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(writer->Write({1, "x", 1, 0, 0, 1}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(writer->Write({0, "x", 1, 0, -1, 1}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScanTraceWriter, RejectsRepeatedPolicy) {
  EXPECT_EQ(ScanTraceWriter::Open(absl::StrCat(::testing::TempDir(), "/rep.txt"),
                                  {"none", "none"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ScanTraceWriter, ReportsMissingDirectoryByName) {
  absl::StatusOr<ScanTraceWriter> writer = ScanTraceWriter::Open(
      absl::StrCat(::testing::TempDir(), "/no-such-dir/scans.txt"), {"none"});
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(writer.status().message().find("no-such-dir/scans.none.txt"), std::string::npos);
}

}  // namespace
}  // namespace schedcache
