// Golden tests for docs/MODEL.md, Cache groups: the report counts each
// named group's runtime and, per policy, the part on the LLC the policy
// preferred for the group at the sample, tested as the policy's total is.
// Reporting only: no decision depends on it. The engine and grid are
// policies/testing/group_engine.h's (LLC 0 = CPUs 0-1, LLC 1 = CPUs 2-3).
#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/testing/engine_harness.h"
#include "policies/testing/group_engine.h"

namespace schedcache {
namespace {

using test_support::FeedSpread;
using test_support::GroupEngine;
using test_support::ScanNow;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kGroup = 77;

TEST(CacheGroupRuntime, CountsTheGroupsRuntimeOnEachPolicysPreferredLlc) {
  // FeedSpread charges group 77 300000 + 100000 (10) + 100000 + 250000
  // (20) = 750000 ns while no policy prefers an LLC for it (99's runtime is
  // its own group's). The scan makes full-scan and visited-scan prefer LLC
  // 0 (first test); none never prefers. Then 10 runs 40000 ns on CPU 1
  // (LLC 0) and 20 60000 on CPU 2 (LLC 1): 850000 ns in all, 40000 of them
  // on full-scan's and visited-scan's preferred LLC, none on none's.
  GroupEngine t;
  FeedSpread(t, kGroup);
  ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  t.Run(1000, 1, 10, 11, 40000, false, kGroup);
  t.Run(1000, 2, 20, 21, 60000, false, kGroup);
  const CacheGroupRuntime want{kGroup, 850000, {40000, 40000, 0}};
  const auto expect_totals = [&](const CacheGroupRuntime& w) {
    const EngineReport report = t.engine->Report();
    ASSERT_EQ(report.cache_groups.size(), 1u);
    EXPECT_EQ(report.cache_groups[0].id, w.id);
    EXPECT_EQ(report.cache_groups[0].runtime_ns, w.runtime_ns);
    EXPECT_EQ(report.cache_groups[0].runtime_on_preferred_llc_ns,
              w.runtime_on_preferred_llc_ns);
    EXPECT_EQ(report.cache_groups_left_out, 0u);
  };
  expect_totals(want);
  // Both members exit: the group ends, its totals stay.
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{2000, 10}).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{2000, 20}).ok());
  expect_totals(want);
  // 77 named again is a fresh group with no preference: its 5000 ns add to
  // the id's runtime, none to the on-preferred sums (855000; 40000, 40000,
  // 0). A sample naming 0 after it charges 30's own group, not 77.
  t.Run(3000, 0, 30, 31, 5000, false, kGroup);
  t.Run(4000, 0, 30, 31, 7000, false, kOwnCacheGroup);
  expect_totals(CacheGroupRuntime{kGroup, 855000, {40000, 40000, 0}});
}

TEST(CacheGroupRuntime, ASampleWhoseAccountDropsThePreferenceIsNotOnIt) {
  // NUMA balancing on, so exceeds_capacity applies (32 MiB = 8192 pages,
  // as above). 10 runs 1000 ns on CPU 0 (no preference yet); the scan
  // prefers LLC 0; 20 runs 3000 ns on CPU 1 (LLC 0; 1000 + 1000 pages
  // fit): on it. 10 then runs 5000 ns on CPU 0 saying 9000 pages: the
  // group's 10000 > 8192, so that sample's Account drops the preference
  // and, as for the policy totals, it is not on a preferred LLC. In all
  // 9000 ns, 3000 on full-scan's and visited-scan's preferred LLC.
  EngineOptions options;
  options.model.numa_balancing = true;
  GroupEngine t(options);
  t.Run(0, 0, 10, 11, 1000, false, kGroup, 2, 1000);
  ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  t.Run(1000, 1, 20, 21, 3000, false, kGroup, 2, 1000);
  t.Run(2000, 0, 10, 11, 5000, false, kGroup, 2, 9000);
  ASSERT_EQ(t.Decisions(10)[0].reason, NoPreferenceReason::kFootprintTooLarge);
  const EngineReport report = t.engine->Report();
  ASSERT_EQ(report.cache_groups.size(), 1u);
  EXPECT_EQ(report.cache_groups[0].runtime_ns, 9000);
  EXPECT_THAT(report.cache_groups[0].runtime_on_preferred_llc_ns,
              ElementsAre(3000, 3000, 0));
}

TEST(CacheGroupRuntime, NoGroupIsReportedWhenNoSampleNamesOne) {
  GroupEngine t;
  FeedSpread(t, kOwnCacheGroup);
  ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  t.Run(1000, 1, 10, 11, 40000, false, kOwnCacheGroup);
  const EngineReport report = t.engine->Report();
  EXPECT_THAT(report.cache_groups, IsEmpty());
  EXPECT_EQ(report.cache_groups_left_out, 0u);
  EXPECT_GT(report.policies[0].runtime_on_preferred_llc, 0);
}

TEST(CacheGroupRuntime, KeepsTheFirstEndedGroupsUpToTheBoundAndCountsTheRest) {
  // Process 10 names groups 1, 2, ..., N + 2 (N = kMaxEndedCacheGroups),
  // 1 ns each: each move ends the group it leaves, so 1..N + 1 end. The
  // first N ended stay, N + 1 is left out, and the live N + 2 is listed.
  GroupEngine t;
  constexpr uint64_t kN = kMaxEndedCacheGroups;
  for (uint64_t id = 1; id <= kN + 2; ++id) {
    t.Run(static_cast<int64_t>(id), 0, 10, 11, 1, false, id);
  }
  const EngineReport report = t.engine->Report();
  ASSERT_EQ(report.cache_groups.size(), kN + 1);
  EXPECT_EQ(report.cache_groups[kN - 1].id, kN);
  EXPECT_EQ(report.cache_groups[kN].id, kN + 2);
  EXPECT_EQ(report.cache_groups[kN].runtime_ns, 1);
  EXPECT_EQ(report.cache_groups_left_out, 1u);
}

}  // namespace
}  // namespace schedcache
