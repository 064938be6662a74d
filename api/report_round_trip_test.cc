// ReportToProto and ReportFromProto: every field of the engine's report
// survives the wire, so `ab --server` prints what an in-process run
// prints. Each field holds a value of its own (1, 2, 3, ...), so a field
// read into another's place, or dropped, fails the comparison.
#include <cstddef>
#include <cstdint>

#include "api/proto_convert.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

Distribution DistinctDistribution(int64_t base) {
  return Distribution{static_cast<uint64_t>(base), base + 0.5, base + 1,
                      base + 2, base + 3};
}

PolicyReport DistinctPolicy(const char* name, uint64_t base) {
  PolicyReport report;
  report.name = name;
  report.scans = base + 1;
  report.scans_skipped = base + 2;
  report.scans_skipped_disabled = base + 3;
  report.scans_aborted = base + 4;
  report.cpus_scanned = DistinctDistribution(base + 10);
  report.llcs_scanned = DistinctDistribution(base + 20);
  report.scan_ns = DistinctDistribution(base + 30);
  report.decisions = base + 5;
  report.agreements = base + 6;
  report.agreement = 0.25;
  report.preferred_llc_changes = base + 7;
  report.runtime_on_preferred_llc = 0.75;
  report.kernel_decisions = base + 8;
  report.kernel_scans = base + 9;
  report.kernel_agreements = base + 40;
  report.kernel_agreement = 0.125;
  report.kernel_process_scans = base + 41;
  return report;
}

void ExpectSameDistribution(const Distribution& got,
                            const Distribution& want) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.mean, want.mean);
  EXPECT_EQ(got.p50, want.p50);
  EXPECT_EQ(got.p99, want.p99);
  EXPECT_EQ(got.max, want.max);
}

void ExpectSamePolicy(const PolicyReport& got, const PolicyReport& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.scans, want.scans);
  EXPECT_EQ(got.scans_skipped, want.scans_skipped);
  EXPECT_EQ(got.scans_skipped_disabled, want.scans_skipped_disabled);
  EXPECT_EQ(got.scans_aborted, want.scans_aborted);
  ExpectSameDistribution(got.cpus_scanned, want.cpus_scanned);
  ExpectSameDistribution(got.llcs_scanned, want.llcs_scanned);
  ExpectSameDistribution(got.scan_ns, want.scan_ns);
  EXPECT_EQ(got.decisions, want.decisions);
  EXPECT_EQ(got.agreements, want.agreements);
  EXPECT_EQ(got.agreement, want.agreement);
  EXPECT_EQ(got.preferred_llc_changes, want.preferred_llc_changes);
  EXPECT_EQ(got.runtime_on_preferred_llc, want.runtime_on_preferred_llc);
  EXPECT_EQ(got.kernel_decisions, want.kernel_decisions);
  EXPECT_EQ(got.kernel_scans, want.kernel_scans);
  EXPECT_EQ(got.kernel_agreements, want.kernel_agreements);
  EXPECT_EQ(got.kernel_agreement, want.kernel_agreement);
  EXPECT_EQ(got.kernel_process_scans, want.kernel_process_scans);
}

TEST(ReportRoundTrip, EveryFieldSurvives) {
  EngineReport report;
  report.policies.push_back(DistinctPolicy("full-scan", 100));
  report.policies.push_back(DistinctPolicy("visited-scan", 200));
  report.samples_applied = 1;
  report.handovers_applied = 2;
  report.exits_applied = 3;
  report.starts_applied = 4;
  report.processes_tracked = 5;
  report.processes_evicted = 6;
  report.kernel_decisions_applied = 7;
  report.kernel_decisions_unmatched = 8;
  report.cache_groups = {CacheGroupRuntime{9, 10, {11, 12}},
                         CacheGroupRuntime{13, 14, {15, 16}}};
  report.cache_groups_left_out = 17;

  const EngineReport back = ReportFromProto(ReportToProto(report));

  ASSERT_EQ(back.policies.size(), 2u);
  ExpectSamePolicy(back.policies[0], report.policies[0]);
  ExpectSamePolicy(back.policies[1], report.policies[1]);
  EXPECT_EQ(back.samples_applied, 1u);
  EXPECT_EQ(back.handovers_applied, 2u);
  EXPECT_EQ(back.exits_applied, 3u);
  EXPECT_EQ(back.starts_applied, 4u);
  EXPECT_EQ(back.processes_tracked, 5u);
  EXPECT_EQ(back.processes_evicted, 6u);
  EXPECT_EQ(back.kernel_decisions_applied, 7u);
  EXPECT_EQ(back.kernel_decisions_unmatched, 8u);
  ASSERT_EQ(back.cache_groups.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.cache_groups[i].id, report.cache_groups[i].id);
    EXPECT_EQ(back.cache_groups[i].runtime_ns,
              report.cache_groups[i].runtime_ns);
    EXPECT_EQ(back.cache_groups[i].runtime_on_preferred_llc_ns,
              report.cache_groups[i].runtime_on_preferred_llc_ns);
  }
  EXPECT_EQ(back.cache_groups_left_out, 17u);
}

TEST(ReportRoundTrip, AnAbsentAgreementStaysAbsent) {
  // A policy that never decided has no agreement (policies/decision.h),
  // which is not an agreement of 0.
  EngineReport report;
  report.policies.emplace_back().name = "none";
  const EngineReport back = ReportFromProto(ReportToProto(report));
  ASSERT_EQ(back.policies.size(), 1u);
  EXPECT_FALSE(back.policies[0].agreement.has_value());
  EXPECT_FALSE(back.policies[0].kernel_agreement.has_value());
}

}  // namespace
}  // namespace schedcache
