// Golden tests for docs/MODEL.md, Cache groups: a named group is one unit
// of the model (summed runtime per CPU, running threads, thread count and
// footprint; one preference its members report), and membership changes
// take nothing along. Derivations in the comments, on "1 node x 2 LLCs x
// 2 CPUs" (LLC 0 = CPUs 0-1, LLC 1 = CPUs 2-3, 32 MiB = 8192 pages each),
// query trigger (scans only where a test asks), HZ 250: jiffy j is [jJ,
// (j + 1)J) with J = 4 ms, an epoch P = 2 jiffies, the first jiffy 0 is
// every CPU's first cpu_epoch_next, aggr_tolerance 1.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/testing/engine_harness.h"
#include "policies/testing/group_engine.h"

namespace schedcache {
namespace {

using test_support::FeedSpread;
using test_support::GridShape;
using test_support::GroupEngine;
using test_support::MakeGrid;
using test_support::ScanNow;
using Change = test_support::GroupChange;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kP = 8'000'000;  // one epoch, 2 jiffies of 4 ms
constexpr uint64_t kGroup = 77;


TEST(CacheGroups, AGroupPrefersTheLlcOfItsSummedOccupancyForEveryMember) {
  // Each alone (own groups): 10 sees LLC 0 = 300000 (CPU 0), LLC 1 =
  // 100000 (CPU 2) and prefers CPU 0; 20 sees LLC 0 = 100000 (CPU 1), LLC
  // 1 = 250000 (CPU 3) and prefers CPU 3.
  GroupEngine alone;
  FeedSpread(alone, kOwnCacheGroup);
  EXPECT_EQ(ScanNow(*alone.engine, 10, 11, 0)[0].preferred_cpu, 0);
  EXPECT_EQ(ScanNow(*alone.engine, 20, 21, 0)[0].preferred_cpu, 3);

  // In one group the runtimes of both sum per CPU: LLC 0 = 300000 +
  // 100000 = 400000, LLC 1 = 100000 + 250000 = 350000. The scan (from 10's
  // thread; 4 threads, nr_running_avg 0: invalid_nr passes) prefers LLC 0
  // and its busiest CPU, 0. 20 reports it without a scan of its own, with
  // the group's evidence and thread count.
  GroupEngine grouped;
  FeedSpread(grouped, kGroup);
  const std::vector<PolicyDecision> scan = ScanNow(*grouped.engine, 10, 11, 0);
  ASSERT_EQ(scan.size(), 3u);
  for (int32_t tgid : {10, 20}) {
    const std::vector<PolicyDecision> d = grouped.Decisions(tgid);
    ASSERT_EQ(d.size(), 3u);
    for (int policy = 0; policy < 2; ++policy) {
      EXPECT_EQ(d[policy].preferred_llc, 0) << tgid << " " << d[policy].policy;
      EXPECT_EQ(d[policy].preferred_cpu, 0) << tgid << " " << d[policy].policy;
      EXPECT_EQ(d[policy].cache_group, kGroup);
      EXPECT_EQ(d[policy].nr_threads, 4);
      ASSERT_EQ(d[policy].llc_occupancy.size(), 2u);
      EXPECT_EQ(d[policy].llc_occupancy[0].occupancy, 400000u);
      EXPECT_EQ(d[policy].llc_occupancy[1].occupancy, 350000u);
    }
  }
  // The group's one change is reported for each member, and counted once.
  EXPECT_THAT(grouped.changes,
              ElementsAre(Change{10, "full-scan", -1, 0,
                                 NoPreferenceReason::kNone, kGroup},
                          Change{20, "full-scan", -1, 0,
                                 NoPreferenceReason::kNone, kGroup},
                          Change{10, "visited-scan", -1, 0,
                                 NoPreferenceReason::kNone, kGroup},
                          Change{20, "visited-scan", -1, 0,
                                 NoPreferenceReason::kNone, kGroup}));
  const EngineReport report = grouped.engine->Report();
  EXPECT_EQ(report.policies[0].preferred_llc_changes, 1u);
  EXPECT_EQ(report.processes_tracked, 3u);  // processes, not groups
  // A snapshot lists every process with its group's preference.
  int members_at_llc0 = 0;
  grouped.engine->ForEachPreference([&](const CurrentPreference& c) {
    if (c.cache_group == kGroup && c.preference.llc == 0) ++members_at_llc0;
  });
  EXPECT_EQ(members_at_llc0, 4);  // 2 processes x 2 cache-aware policies
}

TEST(CacheGroups, ANamedGroupIsNotTheOwnGroupOfTheProcessOfThatNumber) {
  // Process 77 (its own group) runs on CPU 3, process 10 names group 77
  // and runs on CPU 0: two groups, each with its own runtime only.
  GroupEngine t;
  t.Run(0, 3, 77, 771, 1000, false, kOwnCacheGroup);
  t.Run(0, 0, 10, 11, 1000, false, kGroup);
  EXPECT_EQ(ScanNow(*t.engine, 77, 771, 0)[0].preferred_llc, 1);
  EXPECT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  EXPECT_EQ(t.Decisions(77)[0].cache_group, kOwnCacheGroup);
  EXPECT_EQ(t.Decisions(10)[0].cache_group, kGroup);
}

TEST(CacheGroups, AGroupOverTheLlcCapacityIsRefusedWhereEachMemberFits) {
  // NUMA balancing on: exceeds_capacity compares the footprint with the
  // LLC, 32 MiB = 8192 pages at aggr_tolerance 1 (scale 1). 10 (5000
  // pages) runs on CPU 0, 20 (5000 pages) on CPU 1. Alone each fits (5000
  // <= 8192) and its scan prefers LLC 0; together 10000 > 8192, and the
  // group's scan aborts before the loop.
  EngineOptions options;
  options.model.numa_balancing = true;
  for (const uint64_t group : {kOwnCacheGroup, kGroup}) {
    GroupEngine t(options);
    t.Run(0, 0, 10, 11, 1000, false, group, 2, 5000);
    t.Run(0, 1, 20, 21, 1000, false, group, 2, 5000);
    const std::vector<PolicyDecision> d = ScanNow(*t.engine, 10, 11, 0);
    ASSERT_EQ(d.size(), 3u);
    if (group == kOwnCacheGroup) {
      EXPECT_EQ(d[0].preferred_llc, 0);
      EXPECT_EQ(d[0].footprint_pages, 5000);
    } else {
      EXPECT_EQ(d[0].preferred_llc, -1);
      EXPECT_EQ(d[0].reason, NoPreferenceReason::kFootprintTooLarge);
      EXPECT_EQ(d[0].footprint_pages, 10000);
      EXPECT_EQ(t.engine->Report().policies[0].scans_aborted, 1u);
    }
  }
}

TEST(CacheGroups, AGroupWithTooManyRunningThreadsIsRefusedWhereEachAggregates) {
  // invalid_nr on a 2-CPU LLC at aggr_tolerance 1, SMT 1: valid while
  // nr_running_avg * 1280 < 1 * 2 * 1024 = 2048, i.e. avg <= 1. Every
  // thread ticks (stays current): 10's 11 on CPU 0 and 12 on CPU 1, 20's
  // 21 on CPU 2 and 22 on CPU 3, 1000 ns each at t = 0.
  // The scan from 11 (CPU 0, divisor clamp(2 >> 2, 2, 8) = 2) counts the
  // running threads of the scanning group: alone 2 (avg 0 + 2 / 2 = 1),
  // grouped 4 (avg 0 + 4 / 2 = 2). Both scans prefer LLC 0: alone it
  // holds all of 10's runtime; grouped the LLCs tie at 2 * 2^20 * 1000 /
  // 1001 each, and a later LLC must have more to win. The next account (11
  // on CPU 0) checks invalid_nr: alone 1280 < 2048 keeps LLC 0, grouped
  // 2560 < 2048 fails: too many threads.
  for (const uint64_t group : {kOwnCacheGroup, kGroup}) {
    GroupEngine t;
    t.Run(0, 0, 10, 11, 1000, true, group);
    t.Run(0, 1, 10, 12, 1000, true, group);
    t.Run(0, 2, 20, 21, 1000, true, group);
    t.Run(0, 3, 20, 22, 1000, true, group);
    ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
    t.Run(0, 0, 10, 11, 1000, true, group);
    const std::vector<PolicyDecision> d = t.Decisions(10);
    ASSERT_EQ(d.size(), 3u);
    if (group == kOwnCacheGroup) {
      EXPECT_EQ(d[0].nr_running_avg, 1);
      EXPECT_EQ(d[0].preferred_llc, 0);
    } else {
      EXPECT_EQ(d[0].nr_running_avg, 2);
      EXPECT_EQ(d[0].nr_running, 4);
      EXPECT_EQ(d[0].preferred_llc, -1);
      EXPECT_EQ(d[0].reason, NoPreferenceReason::kTooManyThreads);
    }
  }
}

TEST(CacheGroups, AJoinerTakesNothingAlongAndReportsItsNewGroupsPreference) {
  // t = 0: 10 (group 77) runs 1000 ns on CPU 0, 20 (its own group) 3000
  // ns on CPU 2; each scan prefers where it ran: 77 CPU 0 (LLC 0), 20 CPU
  // 2 (LLC 1).
  GroupEngine t;
  t.Run(0, 0, 10, 11, 1000, false, kGroup);
  t.Run(0, 2, 20, 21, 3000, false, kOwnCacheGroup);
  ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  ASSERT_EQ(ScanNow(*t.engine, 20, 21, 0)[0].preferred_llc, 1);
  t.changes.clear();
  // t = P (jiffy 2): 20 joins 77 with a zero-delta sample on CPU 2. Its
  // own group ends; it reports 77's LLC 0 from now on.
  t.Run(kP, 2, 20, 21, 0, false, kGroup);
  EXPECT_THAT(t.changes,
              ElementsAre(Change{20, "full-scan", 1, 0,
                                 NoPreferenceReason::kNone, kGroup},
                          Change{20, "visited-scan", 1, 0,
                                 NoPreferenceReason::kNone, kGroup}));
  // The group's scan at jiffy 2 (the gate opened at 0 + 2), from 21 on
  // CPU 2: both CPUs decay one epoch (ceil(2 / 2)). CPU 0: the group's
  // 1000 and the CPU's 1000 halve to 500, 2^20 * 500 / 501 = 1046483.
  // CPU 2: 20's 3000 stayed in its ended group, so 77 has nothing there:
  // LLC 1 is 0 (had 20 brought its past, 2^20 * 1500 / 1501 = 1047877).
  const std::vector<PolicyDecision> d = ScanNow(*t.engine, 20, 21, kP);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_TRUE(d[0].scanned_now);
  ASSERT_EQ(d[0].llc_occupancy.size(), 2u);
  EXPECT_EQ(d[0].llc_occupancy[0].occupancy, 1046483u);
  EXPECT_EQ(d[0].llc_occupancy[1].occupancy, 0u);
  EXPECT_EQ(d[0].preferred_llc, 0);
  // Each policy chose twice (77's and 20's first preferences); the join
  // is not a choice.
  EXPECT_EQ(t.engine->Report().policies[0].preferred_llc_changes, 2u);
  // Back to a group of its own: a fresh one, with no preference yet.
  t.changes.clear();
  t.Run(kP, 2, 20, 21, 0, false, kOwnCacheGroup);
  EXPECT_THAT(t.changes,
              ElementsAre(Change{20, "full-scan", 0, -1,
                                 NoPreferenceReason::kNoData, kOwnCacheGroup},
                          Change{20, "visited-scan", 0, -1,
                                 NoPreferenceReason::kNoData,
                                 kOwnCacheGroup}));
  EXPECT_EQ(t.Decisions(20)[0].reason, NoPreferenceReason::kNoData);
  EXPECT_EQ(t.Decisions(10)[0].preferred_llc, 0);
}

TEST(CacheGroups, AGroupEndsWithItsLastMemberAndAnExecGivesAFreshOwnGroup) {
  // 10 and 20 in group 77, both on CPU 0: the group prefers LLC 0.
  GroupEngine t;
  t.Run(0, 0, 10, 11, 1000, false, kGroup);
  t.Run(0, 0, 20, 21, 1000, false, kGroup);
  ASSERT_EQ(ScanNow(*t.engine, 10, 11, 0)[0].preferred_llc, 0);
  t.changes.clear();
  // An exec of 10 at t = 10 ns: it leaves 77 (which 20 keeps, preference
  // and all) for a fresh group of its own.
  ASSERT_TRUE(t.engine->ApplyProcessStart(ProcessStart{10, 10}).ok());
  EXPECT_THAT(t.changes,
              ElementsAre(Change{10, "full-scan", 0, -1,
                                 NoPreferenceReason::kExited, kGroup},
                          Change{10, "visited-scan", 0, -1,
                                 NoPreferenceReason::kExited, kGroup}));
  t.Run(20, 2, 10, 10, 1000, false, kOwnCacheGroup);
  EXPECT_EQ(t.Decisions(10)[0].reason, NoPreferenceReason::kNoData);
  EXPECT_EQ(t.Decisions(10)[0].cache_group, kOwnCacheGroup);
  EXPECT_EQ(t.Decisions(20)[0].preferred_llc, 0);
  EXPECT_EQ(t.Decisions(20)[0].nr_threads, 2);  // 20's alone now
  // 20 exits: the group ends with it.
  t.changes.clear();
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{30, 20}).ok());
  EXPECT_THAT(t.changes,
              ElementsAre(Change{20, "full-scan", 0, -1,
                                 NoPreferenceReason::kExited, kGroup},
                          Change{20, "visited-scan", 0, -1,
                                 NoPreferenceReason::kExited, kGroup}));
  // Naming 77 again creates it afresh: nothing to report, no preference.
  t.changes.clear();
  t.Run(40, 1, 30, 31, 1000, false, kGroup);
  EXPECT_THAT(t.changes, IsEmpty());
  const std::vector<PolicyDecision> d = t.Decisions(30);
  EXPECT_EQ(d[0].reason, NoPreferenceReason::kNoData);
  EXPECT_EQ(d[0].nr_threads, 2);
  EXPECT_THAT(d[0].llc_occupancy, IsEmpty());
}

TEST(CacheGroups, EvictionCountsProcessesAndEndsAGroupWithItsLastMember) {
  // max_processes 2 bounds processes: 10 and 20 share 77 (one group
  // record besides them). 30 evicts the least recently sampled, 10, and
  // 77 lives on for 20; 40 evicts 20, and 77 ends.
  EngineOptions options;
  options.max_processes = 2;
  GroupEngine t(options);
  t.Run(0, 0, 10, 11, 1000, false, kGroup);
  t.Run(1, 0, 20, 21, 1000, false, kGroup);
  ASSERT_EQ(ScanNow(*t.engine, 20, 21, 1)[0].preferred_llc, 0);
  t.changes.clear();
  t.Run(2, 2, 30, 31, 1000, false, kOwnCacheGroup);
  EXPECT_THAT(t.changes,
              ElementsAre(Change{10, "full-scan", 0, -1,
                                 NoPreferenceReason::kEvicted, kGroup},
                          Change{10, "visited-scan", 0, -1,
                                 NoPreferenceReason::kEvicted, kGroup}));
  EXPECT_EQ(t.Decisions(20)[0].preferred_llc, 0);
  t.Run(3, 2, 40, 41, 1000, false, kOwnCacheGroup);
  EXPECT_EQ(t.engine->Report().processes_evicted, 2u);
  t.changes.clear();
  t.Run(4, 1, 30, 31, 1000, false, kGroup);  // 30 creates 77 afresh
  EXPECT_THAT(t.changes, IsEmpty());
  EXPECT_EQ(t.Decisions(30)[0].reason, NoPreferenceReason::kNoData);
}

// Replayed is what the property below compares of one run.
struct Replayed {
  std::vector<std::tuple<int32_t, std::string, int, int, NoPreferenceReason,
                         int64_t>>
      changes;
  // Per scan request: whether it was answered, and each policy's CPU.
  std::vector<std::pair<bool, std::vector<int>>> answers;
  std::vector<PolicyReport> reports;
  std::vector<std::vector<PolicyDecision>> finals;  // per process
};

// ReplayGrouped runs a random stream in tick mode; with `named`, every
// sample names a group of the same number as its tgid, so each process is
// the one member of a named group (which must not be its own group).
Replayed ReplayGrouped(const test_support::StreamShape& shape, bool named) {
  Replayed run;
  auto topology = MakeGrid(GridShape{2, 2, 3});
  EngineOptions options;
  options.model.numa_balancing = shape.numa_nodes;
  auto engine = test_support::MustMakeEngine(topology, options);
  if (engine == nullptr) return run;
  engine->SetChangeListener([&](const PreferenceChange& c) {
    run.changes.emplace_back(c.tgid, std::string(c.policy), c.old_llc,
                             c.new_llc, c.reason, c.timestamp_ns);
  });
  for (test_support::StreamEvent event :
       test_support::RandomStream(*topology, shape)) {
    if (Sample* s = std::get_if<Sample>(&event); s != nullptr && named) {
      s->cache_group = static_cast<uint64_t>(s->tgid);
    }
    auto answer = test_support::Apply(*engine, event);
    if (!std::holds_alternative<test_support::ScanRequest>(event)) {
      EXPECT_TRUE(answer.ok()) << answer.status();
      continue;
    }
    // A request for a thread that has not run yet is refused in both.
    std::vector<int> cpus;
    if (answer.ok()) {
      for (const PolicyDecision& d : *answer) cpus.push_back(d.preferred_cpu);
    }
    run.answers.emplace_back(answer.ok(), std::move(cpus));
  }
  run.reports = engine->Report().policies;
  for (int p = 0; p < shape.processes; ++p) {
    RecommendRequest request;
    request.tgid = 100 + p;
    auto d = engine->Recommend(request);
    if (d.ok()) run.finals.push_back(*std::move(d));
  }
  return run;
}

TEST(CacheGroups, ANamedGroupOfOneMemberDecidesAsItsProcessAlone) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    test_support::StreamShape shape;
    shape.seed = seed;
    shape.revisit = seed % 2 == 0;
    shape.numa_nodes = seed % 3 == 0;
    shape.hand_overs = true;
    shape.scan_requests = true;
    const Replayed own = ReplayGrouped(shape, false);
    const Replayed named = ReplayGrouped(shape, true);
    ASSERT_FALSE(own.changes.empty()) << seed;
    EXPECT_EQ(own.changes, named.changes) << seed;
    EXPECT_EQ(own.answers, named.answers) << seed;
    ASSERT_EQ(own.reports.size(), named.reports.size());
    for (size_t i = 0; i < own.reports.size(); ++i) {
      const PolicyReport& a = own.reports[i];
      const PolicyReport& b = named.reports[i];
      EXPECT_EQ(a.scans, b.scans) << seed;
      EXPECT_EQ(a.scans_skipped, b.scans_skipped) << seed;
      EXPECT_EQ(a.scans_aborted, b.scans_aborted) << seed;
      EXPECT_EQ(a.decisions, b.decisions) << seed;
      EXPECT_EQ(a.agreements, b.agreements) << seed;
      EXPECT_EQ(a.preferred_llc_changes, b.preferred_llc_changes) << seed;
      EXPECT_EQ(a.runtime_on_preferred_llc, b.runtime_on_preferred_llc);
      EXPECT_EQ(a.cpus_scanned.mean, b.cpus_scanned.mean) << seed;
    }
    ASSERT_EQ(own.finals.size(), named.finals.size());
    for (size_t p = 0; p < own.finals.size(); ++p) {
      for (size_t i = 0; i < own.finals[p].size(); ++i) {
        const PolicyDecision& a = own.finals[p][i];
        const PolicyDecision& b = named.finals[p][i];
        EXPECT_EQ(a.preferred_cpu, b.preferred_cpu) << seed;
        EXPECT_EQ(a.reason, b.reason) << seed;
        EXPECT_EQ(a.nr_running_avg, b.nr_running_avg) << seed;
        EXPECT_EQ(a.nr_threads, b.nr_threads) << seed;
        EXPECT_EQ(a.llc_occupancy.size(), b.llc_occupancy.size()) << seed;
        EXPECT_EQ(a.cache_group, kOwnCacheGroup);
        EXPECT_EQ(b.cache_group, static_cast<uint64_t>(100 + p));
      }
    }
  }
}

}  // namespace
}  // namespace schedcache
