// Golden values for scan(), account() and the scan trigger of docs/MODEL.md,
// The model, through the engine. Derivations in the comments, in jiffies: HZ
// 250, so jiffy j is [4j, 4j + 4) ms; P = 2 jiffies = 8 ms (HZ / 100); the
// session starts at jiffy 0, where every CPU's cpu_epoch_next starts.
#include <memory>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeGrid;
using test_support::MustMakeEngine;
using test_support::SampleAt;
using test_support::ScanNow;

constexpr int64_t kP = 8'000'000;  // one epoch: 2 jiffies of 4 ms (HZ 250)

EngineOptions QueryMode() {
  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  return options;
}

// Both seed policies must give the same golden answer in these cases.
void ExpectBoth(const std::vector<PolicyDecision>& d, int cpu, int llc) {
  ASSERT_EQ(d.size(), 2u);
  for (const PolicyDecision& one : d) {
    EXPECT_EQ(one.preferred_cpu, cpu) << one.policy;
    EXPECT_EQ(one.preferred_llc, llc) << one.policy;
  }
}

TEST(TwoTimesRule, StaysAtExactlyTwiceAndSwitchesAbove) {
  // "1 node x 2 LLCs x 4 CPUs": LLC 0 = CPUs 0-3, LLC 1 = CPUs 4-7. Every
  // busy CPU runs only this process, so entry.runtime == cpu_runtime == r
  // on each and every busy CPU has the same occupancy o(r) = 2^20 r/(r+1).
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false, 8)).ok());
  // Scan 1 at t = 0: only LLC 0 is busy: pref = CPU 0.
  ExpectBoth(ScanNow(*engine, 10, 1, 0), 0, 0);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 4, 10, 2, 1000, false)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 5, 10, 3, 1000, false)).ok());
  // Scan 2 at t = P: one epoch, every r = 500, o = floor(2^20*500/501) =
  // 1046483. LLC 0 = o, LLC 1 = 2o: 2o > 2*o is false, stay on CPU 0.
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, kP);
  ExpectBoth(d, 0, 0);
  ASSERT_EQ(d[0].llc_occupancy.size(), 2u);
  EXPECT_EQ(d[0].llc_occupancy[0].occupancy, 1046483u);
  EXPECT_EQ(d[0].llc_occupancy[1].occupancy, 2u * 1046483u);
  // CPU 6 joins at t = P with 500 ns (its rq decays to 0 first): r = 500.
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP, 6, 10, 4, 500, false)).ok());
  // Scan 3 at t = 2P: r = 250 everywhere, o' = floor(2^20*250/251) =
  // 1044398. LLC 1 = 3o' > 2o': switch to its first top CPU, 4.
  d = ScanNow(*engine, 10, 1, 2 * kP);
  ExpectBoth(d, 4, 1);
  EXPECT_EQ(d[0].llc_occupancy[1].occupancy, 3u * 1044398u);
}

TEST(SummedOccupancy, EightCpuLlcWithThreeBusyBeatsFourCpuLlcWithTwo) {
  // LLC 0 = CPUs 0-3, LLC 1 = CPUs 4-11, one node (so enable=auto is on).
  TopologySpec spec;
  spec.source = "4+8";
  for (int cpu = 0; cpu < 12; ++cpu) spec.cpus.push_back({cpu, cpu, 0, 0});
  spec.llcs.push_back(
      {3, test_support::kLlcBytes32MiB, CpuSet::FromRange(0, 3)});
  spec.llcs.push_back(
      {3, test_support::kLlcBytes32MiB, CpuSet::FromRange(4, 11)});
  auto topology = Topology::Create(spec);
  ASSERT_TRUE(topology.ok()) << topology.status();
  auto engine =
      MustMakeEngine(std::make_shared<const Topology>(*topology), QueryMode());
  ASSERT_NE(engine, nullptr);
  // Each busy CPU: r = 1000, o = floor(2^20*1000/1001) = 1047528.
  // Summed: LLC 0 = 2o < LLC 1 = 3o. (Averaged, LLC 0 would win: 2o/4 >
  // 3o/8.)
  int tid = 1;
  for (int cpu : {0, 1, 4, 5, 6}) {
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(0, cpu, 10, tid++, 1000, false, 8)).ok());
  }
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 0);
  ExpectBoth(d, 4, 1);
  EXPECT_EQ(d[0].llc_occupancy[0].occupancy, 2u * 1047528u);
  EXPECT_EQ(d[0].llc_occupancy[1].occupancy, 3u * 1047528u);
}

TEST(LlcOrder, AnEqualLaterLlcDoesNotWinTheTie) {
  // CPU 0 (LLC 0) and CPU 4 (LLC 1) each hold o = 1047528: LLC 0 is met
  // first (lowest CPU of the mask), LLC 1 is not strictly larger.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 4, 10, 2, 1000, false, 8)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false)).ok());
  ExpectBoth(ScanNow(*engine, 10, 2, 0), 0, 0);
}

// NrRunningAvg runs scans with `running` threads of a 16-thread process
// current (hand-overs) on a "1 node x 2 LLCs x cpus_per_llc" machine.
class NrRunningAvg : public ::testing::Test {
 protected:
  void SetUpEngine(int cpus_per_llc) {
    engine_ =
        MustMakeEngine(MakeGrid(GridShape{1, 2, cpus_per_llc}), QueryMode());
    ASSERT_NE(engine_, nullptr);
    // Threads 1..8 each ran on CPU tid-1, so both policies visit CPUs 0-7.
    for (int cpu = 0; cpu < 8; ++cpu) {
      ASSERT_TRUE(
          engine_->ApplySample(SampleAt(0, cpu, 10, cpu + 1, 1000, false, 16))
              .ok());
    }
  }
  // ScanWith makes threads 1..running current on CPUs 0..running-1 (the
  // others idle) and scans at `ts`; returns full-scan's decision.
  PolicyDecision ScanWith(int running, int64_t ts) {
    for (int cpu = 0; cpu < 8; ++cpu) {
      HandOver h{ts, cpu, cpu < running ? 10 : 0, cpu < running ? cpu + 1 : 0};
      EXPECT_TRUE(engine_->ApplyHandOver(h).ok());
    }
    std::vector<PolicyDecision> d = ScanNow(*engine_, 10, 1, ts);
    EXPECT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].nr_running_avg, d[1].nr_running_avg);
    return d.empty() ? PolicyDecision{} : d[0];
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(NrRunningAvg, StaysZeroWithOneRunningThreadOnASixteenCpuLlc) {
  // divisor = clamp(16 >> 2, 2, 8) = 4; 0 + (1 - 0) / 4 = 0.
  SetUpEngine(16);
  PolicyDecision d = ScanWith(1, 0);
  EXPECT_EQ(d.nr_running, 1);
  EXPECT_EQ(d.nr_running_avg, 0);
}

TEST_F(NrRunningAvg, TruncatesTowardZeroBothWays) {
  SetUpEngine(16);
  // 0 + 8/4 = 2; 2 + (8-2)/4 = 2 + 1 = 3; 3 + (0-3)/4 = 3 + 0 = 3.
  EXPECT_EQ(ScanWith(8, 0).nr_running_avg, 2);
  EXPECT_EQ(ScanWith(8, kP).nr_running_avg, 3);
  PolicyDecision d = ScanWith(0, 2 * kP);
  EXPECT_EQ(d.nr_running, 0);
  EXPECT_EQ(d.nr_running_avg, 3);
}

TEST_F(NrRunningAvg, SmallLlcsUseTheMinimumDivisorOfTwo) {
  // divisor = clamp(4 >> 2 = 1, 2, 8) = 2: 0 + (1-0)/2 = 0; then the 4
  // current threads on LLC 0 and 4 on LLC 1 give 0 + 8/2 = 4.
  SetUpEngine(4);
  EXPECT_EQ(ScanWith(1, 0).nr_running_avg, 0);
  EXPECT_EQ(ScanWith(8, kP).nr_running_avg, 4);
}

TEST(Account, ResetsThePreferenceWhenNoScanForMoreThanTheTimeout) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false, 8)).ok());
  ExpectBoth(ScanNow(*engine, 10, 1, 0), 0, 0);  // mm.epoch = 0
  // t = 5P = 40 ms, jiffy 10: ceil(10 / 2) = 5 epochs; 5 - 0 > 5 is
  // false: kept.
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(5 * kP, 0, 10, 1, 1000, false)).ok());
  RecommendRequest request;
  request.tgid = 10;
  auto d = engine->Recommend(request);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].preferred_llc, 0);
  // t = 5P + 1 ns is still jiffy 10: nothing moves. t = 44 ms, jiffy 11:
  // ceil(11 / 2) = 6 epochs; 6 - 0 > 5: account resets pref_cpu.
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(5 * kP + 1, 0, 10, 1, 1000, false)).ok());
  d = engine->Recommend(request);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].preferred_llc, 0);
  ASSERT_TRUE(engine->ApplySample(
                        SampleAt(5 * kP + kP / 2, 0, 10, 1, 1000, false))
                  .ok());
  d = engine->Recommend(request);
  ASSERT_TRUE(d.ok());
  for (const PolicyDecision& one : *d) {
    EXPECT_EQ(one.preferred_cpu, -1);
    EXPECT_EQ(one.reason, NoPreferenceReason::kTimedOut);
  }
}

TEST(ScanGate, ASecondScanWithinOnePeriodIsSkipped) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, false, 8)).ok());
  // next_scan starts at the first sample's time (0): runs at once.
  EXPECT_TRUE(ScanNow(*engine, 10, 1, 0)[0].scanned_now);
  EXPECT_FALSE(ScanNow(*engine, 10, 1, kP - 1)[0].scanned_now);
  EXPECT_TRUE(ScanNow(*engine, 10, 1, kP)[0].scanned_now);
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.policies[0].scans, 2u);
  EXPECT_EQ(report.policies[0].scans_skipped, 1u);
}

TEST(ScanGate, AnAbortedScanUsesTheSlotAndLeavesTheAverage) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  // One thread: invalid_nr aborts the scan.
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 1)).ok());
  std::vector<PolicyDecision> d = ScanNow(*engine, 10, 1, 0);
  EXPECT_FALSE(d[0].scanned_now);
  EXPECT_EQ(d[0].reason, NoPreferenceReason::kSingleThread);
  EXPECT_EQ(d[0].nr_running_avg, 0);
  // The slot is used: at t = 1 the gate (next_scan = P) skips.
  ScanNow(*engine, 10, 1, 1);
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.policies[0].scans_aborted, 1u);
  EXPECT_EQ(report.policies[0].scans_skipped, 1u);
  EXPECT_EQ(report.policies[0].scans, 0u);
  EXPECT_EQ(report.policies[0].cpus_scanned.count, 0u);
}

TEST(Tick, ScansOnlyWhenTheProcessEpochIsBehindTheCpu) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), EngineOptions{});
  ASSERT_NE(engine, nullptr);
  // t = 0: mm.epoch = cpu_epoch = 0, no scan.
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 8)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
  // t = 1 ns is still jiffy 0: epoch 0, no trigger.
  ASSERT_TRUE(engine->ApplySample(SampleAt(1, 0, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
  // t = 4 ms, jiffy 1: ceil(1 / 2) = epoch 1 > 0: scan (next_scan 0 <= 1).
  // Pref = CPU 0.
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(kP / 2, 0, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 1u);
  // t = 8 ms, jiffy 2: still epoch 1 (2 is cpu_epoch_next, the earlier
  // epoch): no scan trigger at all.
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP, 0, 10, 1, 1000, true)).ok());
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.policies[0].scans, 1u);
  EXPECT_EQ(report.policies[0].scans_skipped, 0u);
  // full-scan visited all 8 CPUs, visited-scan the one it ran on.
  EXPECT_EQ(report.policies[0].cpus_scanned.max, 8);
  EXPECT_EQ(report.policies[1].cpus_scanned.max, 1);
}

TEST(Tick, AZeroDeltaTickStillDecaysItsCpuAndScans) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), EngineOptions{});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 8)).ok());
  // A tick with delta 0 one epoch and 1 ns later (jiffy 2, epoch 1): the
  // CPU reaches epoch 1, so the process (epoch 0) scans.
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP + 1, 0, 10, 1, 0, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 1u);
}

TEST(QueryMode, TicksNeverScanAndAScanRequestRaisesTheProcessEpoch) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), QueryMode());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 8)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(3 * kP, 0, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
  // A scan at t = 3P raises mm.epoch to 3; an account at 8P (epoch 8:
  // 8 - 3 = 5, not > 5) keeps the preference; without the raise the
  // process would have timed out (8 - 0 > 5).
  ExpectBoth(ScanNow(*engine, 10, 1, 3 * kP), 0, 0);
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(8 * kP, 0, 10, 1, 1000, false)).ok());
  RecommendRequest request;
  request.tgid = 10;
  auto d = engine->Recommend(request);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].preferred_llc, 0);
}

// A 3-CPU part, one node: LLC 0 holds CPUs 0 and 1, LLC 1 CPU 2 alone.
std::shared_ptr<const Topology> MakeLoneCpuLlc() {
  TopologySpec spec;
  spec.source = "test lone-cpu llc";
  CacheSpec shared{3, test_support::kLlcBytes32MiB, CpuSet()};
  CacheSpec lone{3, test_support::kLlcBytes32MiB, CpuSet()};
  for (int cpu = 0; cpu < 3; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu, 0, 0});
    (cpu < 2 ? shared : lone).cpus.Set(cpu);
  }
  spec.llcs = {shared, lone};
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? std::make_shared<const Topology>(*std::move(topology))
                       : nullptr;
}

TEST(Scan, SkipsACpuWithNoCacheSharingDomain) {
  // CPU 2 is alone in LLC 1: the kernel has no sd_llc for it, and
  // task_cache_work's loop skips it (`if (!sd) continue`). Thread 1 runs
  // 1000 ns there, thread 2 500 ns on CPU 0, all at jiffy 0 (no decay).
  // Occupancies: CPU 2 2^20 * 1000 / 1001 = 1047528, CPU 0 2^20 * 500 /
  // 501 = 1046483. Scanning LLC 1 would make it win (1047528 > 1046483);
  // skipped, only LLC 0 is examined and CPU 0 is preferred. Full-scan
  // examines CPUs 0 and 1, visited-scan CPU 0 alone; CPU 2 counts in
  // neither's cost.
  auto engine = MustMakeEngine(MakeLoneCpuLlc());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 2, 10, 1, 1000, false, 2)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 2, 500, false)).ok());
  const std::vector<PolicyDecision> d = ScanNow(*engine, 10, 2, 0);
  ExpectBoth(d, 0, 0);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].cost.cpus_scanned, 2);
  EXPECT_EQ(d[1].cost.cpus_scanned, 1);
  for (const PolicyDecision& one : d) {
    EXPECT_EQ(one.cost.llcs_scanned, 1) << one.policy;
    ASSERT_EQ(one.llc_occupancy.size(), 1u) << one.policy;
    EXPECT_EQ(one.llc_occupancy[0].llc, 0) << one.policy;
    EXPECT_EQ(one.llc_occupancy[0].occupancy, 1046483u) << one.policy;
  }
}

TEST(Tick, EpochBoundariesFollowTheEpochAnchor) {
  // HZ 250 and jiffies 100 began at 1 ms (jiffy j: [1 + 4(j - 100),
  // 5 + 4(j - 100)) ms). The session starts at 1 ms, jiffy 100.
  //  - With the kernel's epochs beginning at odd jiffies (anchor 101),
  //    every cpu_epoch_next starts at 101: the tick at 5 ms (jiffy 101,
  //    not past 101) is still epoch 0, no trigger; the tick at 9 ms
  //    (jiffy 102: ceil((102 - 101) / 2) = 1 epoch) scans.
  //  - Without the epoch anchor the grid begins at the first jiffy, 100:
  //    jiffy 101 is already epoch ceil(1 / 2) = 1, and the 5 ms tick scans.
  for (const bool anchored : {true, false}) {
    SCOPED_TRACE(anchored ? "epoch anchor 101" : "no epoch anchor");
    EngineOptions options;
    options.model.clock_anchor_ns = 1'000'000;
    options.model.clock_anchor_jiffies = 100;
    options.model.epoch_anchor_jiffies = anchored ? 101 : -1;
    auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), options);
    ASSERT_NE(engine, nullptr);
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(1'000'000, 0, 10, 1, 1000, true, 2)).ok());
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(5'000'000, 0, 10, 1, 1000, true)).ok());
    EXPECT_EQ(engine->Report().policies[0].scans, anchored ? 0u : 1u);
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(9'000'000, 0, 10, 1, 1000, true)).ok());
    EXPECT_EQ(engine->Report().policies[0].scans, 1u);
  }
}

}  // namespace
}  // namespace schedcache
