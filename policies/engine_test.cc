// The engine's contract: validation, shared per-CPU state, current-thread
// bookkeeping, eviction, change events, enable=auto and statistics.
#include "policies/engine.h"

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeEngine;
using test_support::MakeGrid;
using test_support::SampleAt;
using test_support::ScanNow;
using ::testing::HasSubstr;

constexpr int64_t kP = 8'000'000;  // one epoch: 2 jiffies of 4 ms (HZ 250)

std::unique_ptr<Engine> MustMake(std::vector<std::string> policies,
                                 EngineOptions options = {},
                                 GridShape shape = GridShape{1, 2, 4}) {
  return test_support::MustMakeEngine(MakeGrid(shape), options, policies);
}

TEST(EngineCreate, RejectsUnknownRepeatedAndMissingPolicies) {
  auto unknown = MakeEngine(MakeGrid({}), {"fastest-scan"});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("fastest-scan"));
  auto twice = MakeEngine(MakeGrid({}), {"full-scan", "full-scan"});
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  auto none = MakeEngine(MakeGrid({}), {});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EngineCreate, RejectsModelTunablesOutOfRange) {
  EngineOptions options;
  options.model.aggr_tolerance = 101;
  auto engine = MakeEngine(MakeGrid({}), {"full-scan"}, options);
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("aggr_tolerance"));
  EXPECT_THAT(engine.status().message(), HasSubstr("0..100"));
}

TEST(EngineCreate, ValidatesPolicyTunablesBeforeCreating) {
  std::vector<PolicyChoice> choices = {
      {"llc-most-runtime", {{"min_share_percent", 150}}}};
  auto engine = Engine::Create(MakeGrid({}), test_support::TestRegistry(),
                               choices, EngineOptions{});
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("min_share_percent"));
  EXPECT_THAT(engine.status().message(), HasSubstr("0..100"));
}

TEST(ApplySample, RejectsBadFieldsAndLeavesTheEngineUnchanged) {
  auto engine = MustMake({"full-scan"});
  ASSERT_NE(engine, nullptr);
  EXPECT_THAT(engine->ApplySample(SampleAt(0, 99, 1, 1, 10, false)).message(),
              HasSubstr("cpu 99"));
  EXPECT_THAT(engine->ApplySample(SampleAt(0, 0, 0, 1, 10, false)).message(),
              HasSubstr("tgid 0"));
  EXPECT_THAT(engine->ApplySample(SampleAt(0, 0, 1, -3, 10, false)).message(),
              HasSubstr("tid -3"));
  EXPECT_THAT(engine->ApplySample(SampleAt(0, 0, 1, 1, -10, false)).message(),
              HasSubstr("delta_ns -10"));
  Sample bad_node = SampleAt(0, 0, 1, 1, 10, false);
  bad_node.numa_node = 7;
  EXPECT_THAT(engine->ApplySample(bad_node).message(), HasSubstr("numa_node 7"));
  ASSERT_TRUE(engine->ApplySample(SampleAt(100, 0, 1, 1, 10, false)).ok());
  EXPECT_THAT(engine->ApplySample(SampleAt(99, 0, 1, 1, 10, false)).message(),
              HasSubstr("timestamp_ns 99"));
  EXPECT_EQ(engine->Report().samples_applied, 1u);
  EXPECT_EQ(engine->Report().processes_tracked, 1u);
}

TEST(ApplyHandOver, RejectsHalfIdleHandOvers) {
  auto engine = MustMake({"full-scan"});
  ASSERT_NE(engine, nullptr);
  EXPECT_FALSE(engine->ApplyHandOver(HandOver{0, 0, 5, 0}).ok());
  EXPECT_TRUE(engine->ApplyHandOver(HandOver{0, 0, 0, 0}).ok());
}

TEST(ApplyBatch, RejectsBadEventsAndAppliesTheRest) {
  auto engine = MustMake({"full-scan"});
  ASSERT_NE(engine, nullptr);
  const std::vector<Event> events = {
      HandOver{0, 0, 1, 1},
      SampleAt(10, 0, 1, 1, 10, false),
      SampleAt(20, 0, 0, 1, 10, false),  // tgid 0
      HandOver{20, 1, 0, 5},             // half idle
      SampleAt(5, 0, 1, 1, 10, false),   // before cpu 0's last timestamp
      SampleAt(30, 1, 2, 2, 10, false),
  };
  std::vector<std::pair<size_t, std::string>> rejected;
  const uint64_t applied = engine->ApplyBatch(
      events, [&](size_t index, const absl::Status& error) {
        rejected.emplace_back(index, std::string(error.message()));
      });
  EXPECT_EQ(applied, 3u);
  ASSERT_EQ(rejected.size(), 3u);
  EXPECT_EQ(rejected[0].first, 2u);
  EXPECT_THAT(rejected[0].second, HasSubstr("tgid 0 must be > 0"));
  EXPECT_EQ(rejected[1].first, 3u);
  EXPECT_THAT(rejected[1].second, HasSubstr("hand-over tgid 0 tid 5"));
  EXPECT_EQ(rejected[2].first, 4u);
  EXPECT_THAT(rejected[2].second, HasSubstr("timestamp_ns 5"));
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.samples_applied, 2u);
  EXPECT_EQ(report.handovers_applied, 1u);
  EXPECT_EQ(report.processes_tracked, 2u);
}

TEST(ApplyBatch, MatchesApplyingEventByEvent) {
  test_support::StreamShape shape;
  shape.hand_overs = true;
  shape.revisit = false;
  const auto topology = MakeGrid(GridShape{2, 2, 4});
  std::vector<Event> events;
  for (const test_support::StreamEvent& e :
       test_support::RandomStream(*topology, shape)) {
    if (const Sample* s = std::get_if<Sample>(&e)) events.push_back(*s);
    if (const HandOver* h = std::get_if<HandOver>(&e)) events.push_back(*h);
  }
  ASSERT_GT(events.size(), 1000u);
  auto one_by_one = MakeEngine(topology, {"full-scan", "visited-scan"});
  auto batched = MakeEngine(topology, {"full-scan", "visited-scan"});
  ASSERT_TRUE(one_by_one.ok() && batched.ok());
  std::vector<std::string> changes[2];
  for (int i = 0; i < 2; ++i) {
    (i == 0 ? **one_by_one : **batched)
        .SetChangeListener([&changes, i](const PreferenceChange& c) {
          changes[i].push_back(absl::StrCat(c.tgid, " ", std::string(c.policy),
                                            " ", c.new_llc, " ",
                                            c.timestamp_ns));
        });
  }
  for (const Event& e : events) {
    const Sample* sample = std::get_if<Sample>(&e);
    ASSERT_TRUE((sample != nullptr
                     ? (*one_by_one)->ApplySample(*sample)
                     : (*one_by_one)->ApplyHandOver(std::get<HandOver>(e)))
                    .ok());
  }
  EXPECT_EQ((*batched)->ApplyBatch(events, [](size_t, const absl::Status&) {
    ADD_FAILURE() << "no event of the stream is bad";
  }),
            events.size());
  EXPECT_EQ(changes[1], changes[0]);
  EXPECT_FALSE(changes[0].empty());
  const EngineReport a = (*one_by_one)->Report();
  const EngineReport b = (*batched)->Report();
  ASSERT_EQ(a.policies.size(), b.policies.size());
  for (size_t i = 0; i < a.policies.size(); ++i) {
    EXPECT_EQ(b.policies[i].scans, a.policies[i].scans);
    EXPECT_EQ(b.policies[i].decisions, a.policies[i].decisions);
    EXPECT_EQ(b.policies[i].agreements, a.policies[i].agreements);
    EXPECT_EQ(b.policies[i].runtime_on_preferred_llc,
              a.policies[i].runtime_on_preferred_llc);
  }
  EXPECT_EQ(b.samples_applied, a.samples_applied);
  EXPECT_EQ(b.handovers_applied, a.handovers_applied);
}

TEST(Recommend, NotFoundForAnUntrackedProcessAndInvalidForABadThread) {
  auto engine = MustMake({"full-scan"});
  ASSERT_NE(engine, nullptr);
  RecommendRequest request;
  request.tgid = 42;
  EXPECT_EQ(engine->Recommend(request).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 42, 1, 10, false)).ok());
  request.tid = 2;
  EXPECT_EQ(engine->Recommend(request).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.tid = 1;
  request.cpu = 1000;
  EXPECT_EQ(engine->Recommend(request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CurrentThread, AThreadIsCurrentOnAtMostOneCpu) {
  // Thread 1 is handed to CPU 0, then ticks on CPU 1: CPU 0 must no longer
  // count it, so a scan sees nr_running = 2 (threads 1 and 2), not 3.
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{0, 0, 10, 1}).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 1, 10, 1, 1000, true, 4)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 2, 10, 2, 1000, true)).ok());
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 0);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].nr_running, 2);
}

TEST(CurrentThread, ASwitchOutLeavesTheCpuWithoutACurrentThread) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 1, 10, 1, 1000, true, 4)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 2, 10, 2, 1000, false)).ok());
  EXPECT_EQ(ScanNow(*engine, 10, 1, 0)[0].nr_running, 1);
}

TEST(ProcessInputs, ThreadCountIsTheLastGivenElseTheDistinctThreadsSeen) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan"}, options);
  ASSERT_NE(engine, nullptr);
  // Never given: one thread seen -> single thread; two seen -> scans.
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false)).ok());
  EXPECT_EQ(ScanNow(*engine, 10, 1, 0)[0].reason,
            NoPreferenceReason::kSingleThread);
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP, 1, 10, 2, 1000, false)).ok());
  EXPECT_TRUE(ScanNow(*engine, 10, 1, kP)[0].scanned_now);
  // Given as 1, it stays 1 on samples that leave it unchanged.
  ASSERT_TRUE(engine->ApplySample(SampleAt(2 * kP, 0, 10, 1, 1000, false, 1)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(2 * kP, 1, 10, 2, 1000, false)).ok());
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 2 * kP);
  EXPECT_FALSE(d[0].scanned_now);
  EXPECT_EQ(d[0].reason, NoPreferenceReason::kSingleThread);
}

TEST(ProcessInputs, ThreadNumaNodeIsKeptPerThread) {
  // NUMA balancing on, "2 nodes x 2 LLCs x 4 CPUs". The process prefers
  // LLC 0 (node 0). Thread 2 said it prefers node 1 once; later samples
  // leave it unchanged, so its answer stays -1 while thread 1's is LLC 0.
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  options.model.numa_balancing = true;
  auto engine = MustMake({"full-scan"}, options, GridShape{2, 2, 4});
  ASSERT_NE(engine, nullptr);
  Sample first = SampleAt(0, 0, 10, 2, 1000, false, 4);
  first.numa_node = 1;
  ASSERT_TRUE(engine->ApplySample(first).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 1, 10, 2, 1000, false)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false)).ok());
  EXPECT_EQ(ScanNow(*engine, 10, 1, 0)[0].preferred_llc, 0);
  RecommendRequest request;
  request.tgid = 10;
  request.tid = 2;
  auto d = engine->Recommend(request);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].preferred_llc, -1);
  EXPECT_EQ((*d)[0].reason, NoPreferenceReason::kOtherNumaNode);
}

TEST(Eviction, TheLeastRecentlyActiveProcessGoesFirst) {
  EngineOptions options;
  options.max_processes = 2;
  auto engine = MustMake({"full-scan", "visited-scan"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 1, 1, 10, false)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(1, 0, 2, 2, 10, false)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(2, 0, 1, 1, 10, false)).ok());  // 1 active
  ASSERT_TRUE(engine->ApplySample(SampleAt(3, 0, 3, 3, 10, false)).ok());  // evicts 2
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.processes_tracked, 2u);
  EXPECT_EQ(report.processes_evicted, 1u);
  RecommendRequest request;
  request.tgid = 2;
  EXPECT_EQ(engine->Recommend(request).status().code(),
            absl::StatusCode::kNotFound);
  request.tgid = 1;
  EXPECT_TRUE(engine->Recommend(request).ok());
}

TEST(ChangeListener, ReportsEveryPreferredLlcChangePerPolicy) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan", "visited-scan"}, options);
  ASSERT_NE(engine, nullptr);
  std::vector<std::pair<std::string, int>> changes;
  engine->SetChangeListener([&](const PreferenceChange& change) {
    EXPECT_EQ(change.tgid, 10);
    changes.emplace_back(std::string(change.policy), change.new_llc);
  });
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 1, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 1, 0);  // both prefer LLC 1
  // Timed out at t = 6P: both drop to -1.
  ASSERT_TRUE(engine->ApplySample(SampleAt(6 * kP, 5, 10, 1, 1000, false)).ok());
  using P = std::pair<std::string, int>;
  EXPECT_THAT(changes, ::testing::ElementsAre(P{"full-scan", 1},
                                              P{"visited-scan", 1},
                                              P{"full-scan", -1},
                                              P{"visited-scan", -1}));
  EXPECT_EQ(engine->Report().policies[1].preferred_llc_changes, 2u);
}

TEST(ChangeListener, CarriesTheNewCpuAndTheReasonForNone) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan"}, options);
  ASSERT_NE(engine, nullptr);
  std::vector<PreferenceChange> changes;
  engine->SetChangeListener(
      [&](const PreferenceChange& change) { changes.push_back(change); });
  // As above: the scan picks CPU 5, the only CPU with runtime (LLC 1 of
  // the 2 x 4 grid); 6 periods later the preference times out.
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 1, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 1, 0);
  ASSERT_TRUE(engine->ApplySample(SampleAt(6 * kP, 5, 10, 1, 1000, false)).ok());
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].new_cpu, 5);
  EXPECT_EQ(changes[0].reason, NoPreferenceReason::kNone);
  EXPECT_EQ(changes[1].new_llc, -1);
  EXPECT_EQ(changes[1].new_cpu, -1);
  EXPECT_EQ(changes[1].reason, NoPreferenceReason::kTimedOut);
}

TEST(ForEachPreference, ListsTrackedProcessesPerPolicyAsLastNoted) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan", "none"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 1, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 1, 0);  // full-scan prefers CPU 5, LLC 1
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP, 0, 20, 2, 1000, false)).ok());
  // Process 30 is known from a hand-over only: not tracked, not listed.
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{2 * kP, 1, 30, 31}).ok());
  std::vector<std::tuple<int32_t, int, int, int, NoPreferenceReason>> seen;
  engine->ForEachPreference([&](const CurrentPreference& current) {
    seen.emplace_back(current.tgid, current.policy, current.preference.llc,
                      current.preference.cpu, current.preference.reason);
  });
  using T = std::tuple<int32_t, int, int, int, NoPreferenceReason>;
  EXPECT_THAT(seen,
              ::testing::ElementsAre(
                  T{10, 0, 1, 5, NoPreferenceReason::kNone},
                  T{10, 1, -1, -1, NoPreferenceReason::kNotCacheAware},
                  // One thread seen: account's invalid_nr says why.
                  T{20, 0, -1, -1, NoPreferenceReason::kSingleThread},
                  T{20, 1, -1, -1, NoPreferenceReason::kNotCacheAware}));
  EXPECT_EQ(engine->now(), 2 * kP);
}

TEST(ScanListener, ReportsEveryExecutedScanWithItsThreadAndCost) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan", "visited-scan"}, options);
  ASSERT_NE(engine, nullptr);
  struct Seen {
    int policy, tgid, tid, cpu, cpus, llcs;
    int64_t ts, scan_ns;
    std::string comm;
    std::vector<std::pair<int, uint64_t>> occupancy;
  };
  std::vector<Seen> scans;
  engine->SetScanListener([&](const ScanObservation& o) {
    Seen& seen = scans.emplace_back(Seen{o.policy, o.tgid, o.tid, o.cpu,
                                         o.cpus_scanned, o.llcs_scanned,
                                         o.timestamp_ns, o.scan_ns,
                                         std::string(o.comm), {}});
    for (const LlcOccupancy& llc : o.llc_occupancy) {
      seen.occupancy.emplace_back(llc.llc, llc.occupancy);
    }
  });
  Sample sample = SampleAt(0, 5, 10, 11, 1000, false, 4);
  sample.comm = Comm("worker");
  ASSERT_TRUE(engine->ApplySample(sample).ok());
  ScanNow(*engine, 10, 11, 1000);
  // A second request in the same epoch is gated by next_scan: no event.
  ScanNow(*engine, 10, 11, 2000);
  // 8 CPUs, all online: full-scan examines every one; visited-scan only
  // CPU 5, the one the process ran on.
  // The process ran all 1000 ns CPU 5 (LLC 1) ran, at time 0; the scan at
  // 1000 ns is still jiffy 0, cpu_epoch_next itself, so nothing decays:
  // occupancy NICE_0_LOAD * 1000 / (1000 + 1) = 1048576000 / 1001 =
  // 1047528 there, 0 on LLC 0, which only full-scan examines.
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_EQ(scans[0].policy, 0);
  EXPECT_EQ(scans[0].cpus, 8);
  EXPECT_EQ(scans[0].llcs, 2);
  EXPECT_THAT(scans[0].occupancy,
              ::testing::ElementsAre(std::pair<int, uint64_t>{0, 0},
                                     std::pair<int, uint64_t>{1, 1047528}));
  EXPECT_EQ(scans[1].policy, 1);
  EXPECT_EQ(scans[1].cpus, 1);
  EXPECT_EQ(scans[1].llcs, 1);
  EXPECT_THAT(scans[1].occupancy, ::testing::ElementsAre(
                                      std::pair<int, uint64_t>{1, 1047528}));
  for (const Seen& s : scans) {
    EXPECT_GE(s.scan_ns, 0);
    EXPECT_EQ(s.tgid, 10);
    EXPECT_EQ(s.tid, 11);
    EXPECT_EQ(s.cpu, 5);
    EXPECT_EQ(s.ts, 1000);
    EXPECT_EQ(s.comm, "worker");
  }
}

// The same scans as above: full-scan examines both LLCs of the grid (CPUs
// 0-3 and 4-7), visited-scan only LLC 1 (CPU 5). Both find the process's
// only runtime on CPU 5, so LLC 1's occupancy beats twice the current
// LLC's (none, 0) and the preference after the scan is LLC 1.
TEST(ScanListener, SaysTheLlcsScannedAndThePreferenceAfterTheScan) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan", "visited-scan"}, options);
  ASSERT_NE(engine, nullptr);
  std::vector<std::pair<int, int>> seen;  // (llcs_scanned, preferred_llc)
  engine->SetScanListener([&](const ScanObservation& o) {
    seen.emplace_back(o.llcs_scanned, o.preferred_llc);
    EXPECT_GE(o.scan_ns, 0);
  });
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 11, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 11, 1000);
  EXPECT_THAT(seen, ::testing::ElementsAre(std::pair{2, 1}, std::pair{1, 1}));
}

TEST(ForEachPolicyStats, ReadsWhatTheReportSummarises) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  options.max_processes = 1;
  auto engine = MustMake({"full-scan", "visited-scan"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 11, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 11, 1000);
  // Process 20 evicts 10 (max_processes 1).
  ASSERT_TRUE(engine->ApplySample(SampleAt(2000, 5, 20, 21, 10, false)).ok());
  const EngineReport report = engine->Report();
  std::vector<std::string> names;
  engine->ForEachPolicyStats([&](std::string_view name, const PolicyStats& s) {
    const PolicyReport& summary = report.policies[names.size()];
    names.emplace_back(name);
    EXPECT_EQ(name, summary.name);
    EXPECT_EQ(s.scans, summary.scans);
    EXPECT_EQ(s.preferred_llc_changes, summary.preferred_llc_changes);
    // One scan each, as in ScanListener's test: 8 CPUs, then 1.
    EXPECT_EQ(s.cpus_scanned.count(), 1u);
    EXPECT_EQ(s.cpus_scanned.CountAtMost(0), 0u);
    EXPECT_EQ(s.cpus_scanned.sum(), names.size() == 1 ? 8.0 : 1.0);
  });
  EXPECT_THAT(names, ::testing::ElementsAre("full-scan", "visited-scan"));
  EXPECT_EQ(engine->processes_evicted(), 1u);
  EXPECT_EQ(engine->processes_evicted(), report.processes_evicted);
}

TEST(Enable, AutoNeverScansWithoutANodeOfTwoLlcs) {
  // "2 nodes x 1 LLC x 4 CPUs": MaxLlcsPerNode() = 1.
  auto engine = MustMake({"full-scan"}, {}, GridShape{2, 1, 4});
  ASSERT_NE(engine, nullptr);
  EXPECT_FALSE(engine->enabled());
  for (int64_t t = 0; t < 10 * kP; t += kP / 2) {
    ASSERT_TRUE(engine->ApplySample(SampleAt(t, 0, 10, 1, 1000, true, 4)).ok());
  }
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 10 * kP);
  EXPECT_EQ(d[0].reason, NoPreferenceReason::kDisabled);
  EXPECT_FALSE(d[0].scanned_now);
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
}

TEST(Enable, OnForcesScansOnAnyTopology) {
  EngineOptions options;
  options.model.enable = Enable::kOn;
  auto engine = MustMake({"full-scan"}, options, GridShape{2, 1, 4});
  ASSERT_NE(engine, nullptr);
  EXPECT_TRUE(engine->enabled());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 4)).ok());
  // 4 ms is jiffy 1: CPU 0 reaches epoch ceil(1 / 2) = 1, the tick scans.
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(kP / 2, 0, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 1u);
}

TEST(NonePolicy, NeverPrefersAndCostsNothing) {
  auto engine = MustMake({"none"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 4)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP + 1, 0, 10, 1, 1000, true)).ok());
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 2 * kP);
  EXPECT_EQ(d[0].preferred_llc, -1);
  EXPECT_EQ(d[0].reason, NoPreferenceReason::kNotCacheAware);
  EXPECT_EQ(d[0].cost.cpus_scanned, 0);
  EXPECT_EQ(d[0].cost.scan_ns, 0);
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
}

TEST(Report, RuntimeOnPreferredLlcIsTheShareAccountedThere) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan"}, options);
  ASSERT_NE(engine, nullptr);
  // 1000 ns before any preference, then pref = LLC 0 (CPU 0); then 3000 ns
  // on CPU 1 (LLC 0) and 1000 ns on CPU 4 (LLC 1): 3000 / 5000 = 0.6.
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 1, 0);
  ASSERT_TRUE(engine->ApplySample(SampleAt(1, 1, 10, 1, 3000, false)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(2, 4, 10, 2, 1000, false)).ok());
  EXPECT_DOUBLE_EQ(engine->Report().policies[0].runtime_on_preferred_llc, 0.6);
}

TEST(Report, AgreementCountsTriggersWhereTheReferenceDidNotSkip) {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = MustMake({"full-scan", "none"}, options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false, 4)).ok());
  ScanNow(*engine, 10, 1, 0);      // executed: full-scan LLC 0, none -1
  ScanNow(*engine, 10, 1, 1);      // skipped by the reference: not counted
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.policies[1].decisions, 1u);
  EXPECT_EQ(report.policies[1].agreements, 0u);
  EXPECT_EQ(report.policies[1].agreement, 0.0);
  EXPECT_EQ(report.policies[0].agreement, 1.0);
}

}  // namespace
}  // namespace schedcache
