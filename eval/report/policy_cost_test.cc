#include "eval/report/policy_cost.h"

#include <cstdint>

#include "eval/report/internal/example_report.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using report_internal::ExampleReport;
using report_internal::PolicyOf;

// ExampleReport's processes ran 900 + 300 + 1 ms = 1.201 s of CPU time.
// full-scan: 10 scans of mean 8.0 CPUs = 80 CPUs, 10 of mean 1500 ns =
// 15000 ns; visited-scan: 10 of 3.6 = 36 CPUs, 10 of 520 ns = 5200 ns.
TEST(PolicyCost, DividesScanTotalsByTheSimulatedCpuTime) {
  const ResultCost cost = ComputeCost(ExampleReport());
  EXPECT_EQ(cost.cpu_time_ns, 1'201'000'000);
  ASSERT_EQ(cost.policies.size(), 2u);
  const PolicyCost& full = cost.policies[0];
  EXPECT_EQ(full.cpus_scanned_total, 80);
  EXPECT_DOUBLE_EQ(*full.cpus_scanned_per_cpu_second, 80 / 1.201);
  EXPECT_DOUBLE_EQ(full.scan_ns_total, 15000);
  EXPECT_DOUBLE_EQ(*full.scan_time_share, 15000 / 1.201e9);
  EXPECT_DOUBLE_EQ(*full.cpus_scanned_vs_reference, 1.0);
  EXPECT_DOUBLE_EQ(*full.scan_time_vs_reference, 1.0);
  const PolicyCost& visited = cost.policies[1];
  EXPECT_EQ(visited.cpus_scanned_total, 36);
  EXPECT_DOUBLE_EQ(*visited.cpus_scanned_per_cpu_second, 36 / 1.201);
  EXPECT_DOUBLE_EQ(*visited.scan_time_share, 5200 / 1.201e9);
  EXPECT_DOUBLE_EQ(*visited.cpus_scanned_vs_reference, 36.0 / 80);
  EXPECT_DOUBLE_EQ(*visited.scan_time_vs_reference, 5200.0 / 15000);
}

// 29 CPUs over 7 scans: the mean 29 / 7 times 7 is 29.000000000000004 in
// double; the total rounds back to the exact 29.
TEST(PolicyCost, RoundsTheCpusScannedTotalToAnInteger) {
  v1::AbReport report = ExampleReport();
  const int64_t scans = 7;
  v1::Distribution& cpus = *PolicyOf(report, 1).mutable_cpus_scanned();
  cpus.set_count(scans);
  cpus.set_mean(29.0 / scans);
  cpus.set_p50(4);
  ASSERT_NE(cpus.mean() * scans, 29.0);
  EXPECT_EQ(ComputeCost(report).policies[1].cpus_scanned_total, 29);
}

TEST(PolicyCost, HasNoRatiosWhenTheReferenceNeverScanned) {
  v1::AbReport report = ExampleReport();
  PolicyOf(report, 0).clear_cpus_scanned();
  PolicyOf(report, 0).clear_scan_ns();
  const ResultCost cost = ComputeCost(report);
  EXPECT_FALSE(cost.policies[1].cpus_scanned_vs_reference.has_value());
  EXPECT_FALSE(cost.policies[1].scan_time_vs_reference.has_value());
  // Its own rate still stands.
  EXPECT_DOUBLE_EQ(*cost.policies[1].cpus_scanned_per_cpu_second, 36 / 1.201);
}

TEST(PolicyCost, HasNoRatesWithoutCpuTime) {
  v1::AbReport report = ExampleReport();
  report.clear_processes();
  const ResultCost cost = ComputeCost(report);
  EXPECT_EQ(cost.cpu_time_ns, 0);
  EXPECT_FALSE(cost.policies[0].cpus_scanned_per_cpu_second.has_value());
  EXPECT_FALSE(cost.policies[0].scan_time_share.has_value());
  EXPECT_DOUBLE_EQ(*cost.policies[1].cpus_scanned_vs_reference, 0.45);
}

TEST(PolicyCost, CpuTimeSaturatesInsteadOfWrapping) {
  v1::AbReport report = ExampleReport();
  report.mutable_processes(0)->set_runtime_ns(INT64_MAX);
  EXPECT_EQ(ComputeCost(report).cpu_time_ns, INT64_MAX);
}

// The seed: 0.02% / 0.81% of cycles with NUMA balancing off, 0.03% /
// 0.13% with it on.
TEST(SeedCost, VisitedScanAgainstFullScanIsTheSeedsRatio) {
  const SeedCost* visited = SeedCostOf("visited-scan");
  ASSERT_NE(visited, nullptr);
  const SeedRatio ratio = SeedVsFullScan(*visited);
  EXPECT_DOUBLE_EQ(ratio.numa_balancing_off, 0.02 / 0.81);
  EXPECT_DOUBLE_EQ(ratio.numa_balancing_on, 0.03 / 0.13);
  EXPECT_DOUBLE_EQ(SeedVsFullScan(*SeedCostOf("full-scan")).numa_balancing_on, 1.0);
  EXPECT_EQ(SeedCostOf("none"), nullptr);
}

}  // namespace
}  // namespace schedcache
