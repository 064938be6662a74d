#include "eval/report/table_report.h"

#include <sstream>
#include <string>

#include "eval/report/internal/example_report.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::ExampleReport;
using report_internal::PolicyOf;

// The expected text is laid out by hand from the column widths: each column
// is as wide as its widest cell or heading; "scan time (us)" (14) is wider
// than its two columns ("mean" 4 + gap 2 + "2.50" 4 = 10), so its first
// column grows by 4; group headings are centred; groups are joined by " | ".
// The cost table, by hand: the processes ran 900 + 300 + 1 ms = 1.201 s of
// CPU time. full-scan scanned 10 x 8.0 = 80 CPUs (80 / 1.201 = 66.6 per
// CPU-s) in 10 x 1500 ns = 15.00 us (15000 / 1.201e9 = 0.00125% of it);
// visited-scan 10 x 3.6 = 36 CPUs (30.0 per CPU-s, 36 / 80 = 0.450x) in
// 10 x 520 ns = 5.20 us (0.000433%, 5200 / 15000 = 0.347x). The seed's
// visited-scan: 0.02 / 0.81 = 0.0247x, 0.03 / 0.13 = 0.231x. "work rate
// (machine-independent)" (31) is narrower than its columns (12 + 2 + 9 + 2
// + 12 = 37), so it is centred with 3 spaces each side.
TEST(TextReport, PrintsInputSummaryAndAlignedTable) {
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(ExampleReport(), out).ok());
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
            "    0.52  1.25 |        10     90.00 |       3          68.75\n"
            "\n"
            "cost over 1.201000 s of simulated CPU time (the runtime of all "
            "samples); scan time is the model's own on this machine, not the "
            "kernel's; seed: perf top -e cycles:k, 2-socket EPYC 9654, "
            "valkey-benchmark at 400000 rps\n"
            "             |    work rate (machine-independent)    | "
            "     model scan time, this machine      | "
            "       seed: kernel task_cache_work, % of cycles\n"
            "policy       | CPUs scanned  per CPU-s  vs full-scan | "
            "total (us)  % of CPU time  vs full-scan | "
            "NUMA bal. off  vs full-scan  NUMA bal. on  vs full-scan\n"
            "-------------+---------------------------------------+-"
            "----------------------------------------+-"
            "-------------------------------------------------------\n"
            "full-scan    |           80       66.6         1.00x | "
            "     15.00        0.00125         1.00x | "
            "         0.81         1.00x          0.13         1.00x\n"
            "visited-scan |           36       30.0        0.450x | "
            "      5.20       0.000433        0.347x | "
            "         0.02       0.0247x          0.03        0.231x\n");
}

// A policy the seed never measured has no seed figures, and with a
// reference that never scanned there is no ratio to show.
TEST(TextReport, ShowsDashForCostsWithNothingToCompare) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 0).set_policy("plugin");
  PolicyOf(report, 0).clear_cpus_scanned();
  PolicyOf(report, 0).clear_scan_ns();
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(report, out).ok());
  // The ratio columns are headed "vs plugin" (9 wide).
  EXPECT_NE(out.str().find("plugin       |            0        0.0          - | "
                           "      0.00           0.00          - | "
                           "            -             -             -             -\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("visited-scan |           36       30.0          - | "
                           "      5.20       0.000433          - | "
                           "         0.02       0.0247x          0.03        0.231x\n"),
            std::string::npos)
      << out.str();
}

TEST(TextReport, RejectsResultWithoutPolicies) {
  v1::AbReport report = ExampleReport();
  report.clear_policies();
  std::ostringstream out;
  absl::Status status = WriteTextReport(report, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("policies"), std::string::npos);
}

TEST(TextReport, RejectsProcessWithWrongNumberOfFinalLlcs) {
  v1::AbReport report = ExampleReport();
  report.mutable_processes(1)->mutable_final_preferred_llc()->RemoveLast();
  std::ostringstream out;
  absl::Status status = WriteTextReport(report, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("tgid=200"), std::string::npos);
}

// AddExampleGroups adds three cache groups to ExampleReport's two policies:
// "pair" (100, 200; 1.2 s, 0 and 0.9 s on the preferred LLC), unnamed 9
// (tgids 1..10; 0.3 s, 0.1 and 0.3 s) and "idle" (no member, no runtime).
void AddExampleGroups(v1::AbReport& report) {
  v1::AbCacheGroup& pair = *report.add_cache_groups();
  pair.set_id(1);
  pair.set_name("pair");
  pair.add_member_tgids(100);
  pair.add_member_tgids(200);
  pair.set_runtime_ns(1'200'000'000);
  pair.add_final_preferred_llc(1);
  pair.add_final_preferred_llc(1);
  pair.add_runtime_on_preferred_llc_ns(0);
  pair.add_runtime_on_preferred_llc_ns(900'000'000);
  v1::AbCacheGroup& unnamed = *report.add_cache_groups();
  unnamed.set_id(9);
  for (int tgid = 1; tgid <= 10; ++tgid) unnamed.add_member_tgids(tgid);
  unnamed.set_runtime_ns(300'000'000);
  unnamed.add_final_preferred_llc(-1);
  unnamed.add_final_preferred_llc(0);
  unnamed.add_runtime_on_preferred_llc_ns(100'000'000);
  unnamed.add_runtime_on_preferred_llc_ns(300'000'000);
  v1::AbCacheGroup& idle = *report.add_cache_groups();
  idle.set_id(3);
  idle.set_name("idle");
  idle.add_final_preferred_llc(-1);
  idle.add_final_preferred_llc(-1);
  idle.add_runtime_on_preferred_llc_ns(0);
  idle.add_runtime_on_preferred_llc_ns(0);
}

// Cache groups, laid out by hand as the tables above: the first four
// columns share an untitled group of 5 ("group") + 2 ("id") + 18
// ("1,2,3,4,5,6,7,8 +2": 8 members shown, 2 more) + 11 ("runtime (s)")
// + 3 gaps of 2 = 42; "preferred LLC at the end" (24) is wider than
// "full-scan" (9) + 2 + "visited-scan" (12) = 23, so "full-scan" grows to
// 10; "runtime on preferred LLC (%)" (28) is 5 wider than the same 23, so
// its "full-scan" grows to 14. Group 9 has no name, so its id stands for
// it; its -1 is "-". The shares: pair 0 / 1.2 s = 0.00% and 0.9 / 1.2 =
// 75.00%; group 9 0.1 / 0.3 = 33.33% and 0.3 / 0.3 = 100.00%; idle ran
// nothing, so "-" (not 0 / 0).
TEST(TextReport, ListsCacheGroupsAfterTheCostTable) {
  v1::AbReport report = ExampleReport();
  AddExampleGroups(report);
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(report, out).ok());
  const std::string text = out.str();
  const size_t groups = text.find("\ncache groups");
  ASSERT_NE(groups, std::string::npos) << text;
  EXPECT_EQ(text.substr(groups),
            "\ncache groups (docs/MODEL.md, Cache groups), busiest first; a "
            "member's final preferred LLC is its group's\n"
            "                                           | preferred LLC at the end | runtime on preferred LLC (%)\n"
            "group  id  members             runtime (s) |  full-scan  visited-scan |      full-scan  visited-scan\n"
            "-------------------------------------------+--------------------------+-----------------------------\n"
            "pair    1  100,200                   1.200 |          1             1 |           0.00         75.00\n"
            "9       9  1,2,3,4,5,6,7,8 +2        0.300 |          -             0 |          33.33        100.00\n"
            "idle    3                            0.000 |          -             - |              -             -\n");
  // Without groups, the report ends with the cost table.
  std::ostringstream plain;
  ASSERT_TRUE(WriteTextReport(ExampleReport(), plain).ok());
  EXPECT_EQ(plain.str().find("cache groups"), std::string::npos);
}

// A group needs one final LLC per policy, as a process does.
TEST(TextReport, RejectsGroupWithWrongNumberOfFinalLlcs) {
  v1::AbReport report = ExampleReport();
  v1::AbCacheGroup& group = *report.add_cache_groups();
  group.set_id(4);
  group.add_final_preferred_llc(0);
  std::ostringstream out;
  const absl::Status status = WriteTextReport(report, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("cache_groups[id=4]"), std::string::npos)
      << status.message();
}

// A group's runtime on the preferred LLC is none or one per policy.
TEST(TextReport, RejectsGroupWithWrongNumberOfRuntimesOnPreferredLlc) {
  v1::AbReport report = ExampleReport();
  v1::AbCacheGroup& group = *report.add_cache_groups();
  group.set_id(5);
  group.add_final_preferred_llc(0);
  group.add_final_preferred_llc(0);
  group.add_runtime_on_preferred_llc_ns(1);
  std::ostringstream out;
  const absl::Status status = WriteTextReport(report, out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("cache_groups[id=5].runtime_on_preferred_llc_ns"),
            std::string::npos)
      << status.message();
}

// The CSV of the cache groups: the text table's columns under their csv
// names, one row per group of AddExampleGroups, and every member: group
// 9's ten, where the text shows eight and "+2". Without groups, only the
// header.
TEST(CacheGroupsCsv, ListsEveryGroupWithEveryMember) {
  v1::AbReport report = ExampleReport();
  AddExampleGroups(report);
  std::ostringstream out;
  ASSERT_TRUE(WriteCacheGroupsCsv(report, out).ok());
  const std::string header =
      "group,id,members,runtime_s,final_llc_full-scan,final_llc_visited-scan,"
      "runtime_on_preferred_llc_pct_full-scan,"
      "runtime_on_preferred_llc_pct_visited-scan\n";
  EXPECT_EQ(out.str(), header +
                           "pair,1,\"100,200\",1.200,1,1,0.00,75.00\n"
                           "9,9,\"1,2,3,4,5,6,7,8,9,10\",0.300,-,0,33.33,100.00\n"
                           "idle,3,,0.000,-,-,-,-\n");
  std::ostringstream empty;
  ASSERT_TRUE(WriteCacheGroupsCsv(ExampleReport(), empty).ok());
  EXPECT_EQ(empty.str(), header);
}

TEST(TextReport, ReportsDataLossWhenStreamFails) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_EQ(WriteTextReport(ExampleReport(), out).code(), absl::StatusCode::kDataLoss);
}

// The policy table's cells, then the cost table's as derived above for the
// text report.
TEST(Csv, WritesHeaderAndOneRowPerPolicy) {
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(ExampleReport(), out).ok());
  EXPECT_EQ(out.str(),
            "policy,cpus_scanned_mean,cpus_scanned_p50,cpus_scanned_p99,"
            "cpus_scanned_max,scans,scans_skipped,scans_aborted,scan_us_mean,"
            "scan_us_p99,decisions,agreement_pct,preferred_llc_changes,"
            "runtime_on_preferred_llc_pct,cpus_scanned_total,"
            "cpus_scanned_per_cpu_second,cpus_scanned_vs_reference,"
            "scan_us_total,scan_time_cpu_pct,scan_time_vs_reference,"
            "seed_cycles_pct_numa_balancing_off,"
            "seed_numa_balancing_off_vs_full_scan,"
            "seed_cycles_pct_numa_balancing_on,"
            "seed_numa_balancing_on_vs_full_scan\n"
            "full-scan,8.0,8,8,8,10,5,1,1.50,2.50,10,100.00,2,75.00,"
            "80,66.6,1.00x,15.00,0.00125,1.00x,0.81,1.00x,0.13,1.00x\n"
            "visited-scan,3.6,3,8,8,10,5,1,0.52,1.25,10,90.00,3,68.75,"
            "36,30.0,0.450x,5.20,0.000433,0.347x,0.02,0.0247x,0.03,0.231x\n");
}

// A policy with no decisions has no agreement share: "-", not 100.00.
TEST(TextReport, ShowsDashForAgreementWithoutDecisions) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 1).set_decisions(0);
  PolicyOf(report, 1).clear_agreement();
  std::ostringstream out;
  ASSERT_TRUE(WriteTextReport(report, out).ok());
  EXPECT_NE(out.str().find("|         0         - |"), std::string::npos)
      << out.str();
}

TEST(Csv, ShowsDashForAgreementWithoutDecisions) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 1).set_decisions(0);
  PolicyOf(report, 1).clear_agreement();
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(report, out).ok());
  EXPECT_NE(out.str().find("visited-scan,3.6,3,8,8,10,5,1,0.52,1.25,0,-,3,"),
            std::string::npos)
      << out.str();
}

TEST(Csv, QuotesFieldsWithCommasAndQuotes) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 1).set_policy("odd,\"name\"");
  std::ostringstream out;
  ASSERT_TRUE(WriteCsv(report, out).ok());
  EXPECT_NE(out.str().find("\n\"odd,\"\"name\"\"\",3.6,"), std::string::npos);
}

}  // namespace
}  // namespace schedcache
