// Golden values for the arithmetic of docs/MODEL.md, The model, derived by hand
// in the comments (never taken from a run of the code).
#include "policies/kernel_model.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/model_context.h"
#include "policies/testing/test_topologies.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeGrid;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// VisitedCpus is the CPUs of mm's visited set, in increasing order.
std::vector<int> VisitedCpus(const MmState& mm) {
  std::vector<int> cpus;
  for (const uint32_t index : mm.visited_entries) {
    cpus.push_back(mm.cpus[index].cpu);
  }
  return cpus;
}

constexpr int64_t kP = 10;  // epoch period, jiffies, for the pure decay tests
constexpr uint64_t kAllOnes = std::numeric_limits<uint64_t>::max();

RqState FreshRq() {
  RqState rq;
  rq.cpu_epoch_next = 100;  // the session started at jiffy 100
  rq.cpu_runtime = kAllOnes;
  return rq;
}

TEST(Decay, NothingHappensAtExactlyCpuEpochNext) {
  // now == cpu_epoch_next belongs to the earlier epoch: 0 epochs pass.
  RqState rq = FreshRq();
  AdvanceRq(rq, 100, kP);
  EXPECT_EQ(rq.cpu_epoch, 0);
  EXPECT_EQ(rq.cpu_epoch_next, 100);
  EXPECT_EQ(rq.cpu_runtime, kAllOnes);
}

TEST(Decay, OneJiffyPastTheBoundaryAdvancesOneEpoch) {
  // n = ceil((101 - 100) / 10) = 1: epoch 1, next 110, runtime >> 1.
  RqState rq = FreshRq();
  AdvanceRq(rq, 101, kP);
  EXPECT_EQ(rq.cpu_epoch, 1);
  EXPECT_EQ(rq.cpu_epoch_next, 110);
  EXPECT_EQ(rq.cpu_runtime, kAllOnes >> 1);
}

TEST(Decay, EpochsAdvanceByTheCeilingOfElapsedPeriods) {
  // 110: ceil(10/10) = 1 (exactly one period); 111: ceil(11/10) = 2.
  RqState rq = FreshRq();
  AdvanceRq(rq, 110, kP);
  EXPECT_EQ(rq.cpu_epoch, 1);
  EXPECT_EQ(rq.cpu_epoch_next, 110);
  RqState rq2 = FreshRq();
  AdvanceRq(rq2, 111, kP);
  EXPECT_EQ(rq2.cpu_epoch, 2);
  EXPECT_EQ(rq2.cpu_epoch_next, 120);
}

TEST(Decay, SixtyThreeEpochsLeaveTheTopBit) {
  // now = 100 + 62*10 + 1 = 721: n = ceil(621/10) = 63; all-ones >> 63 = 1.
  RqState rq = FreshRq();
  AdvanceRq(rq, 721, kP);
  EXPECT_EQ(rq.cpu_epoch, 63);
  EXPECT_EQ(rq.cpu_epoch_next, 730);
  EXPECT_EQ(rq.cpu_runtime, 1u);
}

TEST(Decay, SixtyFourEpochsClearTheRuntime) {
  // now = 731: n = ceil(631/10) = 64; a shift by 64 gives 0, not UB.
  RqState rq = FreshRq();
  AdvanceRq(rq, 731, kP);
  EXPECT_EQ(rq.cpu_epoch, 64);
  EXPECT_EQ(rq.cpu_runtime, 0u);
}

TEST(Decay, ThousandEpochsClearTheRuntime) {
  // now = 100 + 999*10 + 1: n = 1000.
  RqState rq = FreshRq();
  AdvanceRq(rq, 100 + 999 * kP + 1, kP);
  EXPECT_EQ(rq.cpu_epoch, 1000);
  EXPECT_EQ(rq.cpu_epoch_next, 100 + 1000 * kP);
  EXPECT_EQ(rq.cpu_runtime, 0u);
}

TEST(Decay, ComposesExactlyWhicheverCallerAdvancedFirst) {
  // 100 -> 137 -> 205 equals 100 -> 205: ceil(37/10) = 4 then
  // ceil((205-140)/10) = 7, total 11 = ceil(105/10).
  RqState stepped = FreshRq();
  AdvanceRq(stepped, 137, kP);
  AdvanceRq(stepped, 205, kP);
  RqState direct = FreshRq();
  AdvanceRq(direct, 205, kP);
  EXPECT_EQ(stepped.cpu_epoch, 11);
  EXPECT_EQ(direct.cpu_epoch, 11);
  EXPECT_EQ(stepped.cpu_epoch_next, direct.cpu_epoch_next);
  EXPECT_EQ(stepped.cpu_runtime, direct.cpu_runtime);
}

TEST(EpochPhase, StartPutsEveryCpuOnTheAnchorsGrid) {
  // Period 2, the kernel's epochs begin at 4294937297 + 2k. The first
  // boundary at or after the session's first jiffy:
  //   first 4294937300: floor(3 / 2) = 1 -> 4294937299 < first -> 4294937301
  //   first 4294937301: on the grid itself -> 4294937301
  //   first 4294937290 (before the anchor): floor(-7 / 2) = -4 ->
  //     4294937289 < first -> 4294937291
  // Without the anchor the grid begins at the first jiffy.
  const std::pair<int64_t, int64_t> first_boundary[] = {
      {4'294'937'300, 4'294'937'301},
      {4'294'937'301, 4'294'937'301},
      {4'294'937'290, 4'294'937'291}};
  ModelTunables tunables;  // HZ 250: period 2
  tunables.epoch_anchor_jiffies = 4'294'937'297;
  for (const auto& [first, boundary] : first_boundary) {
    ModelContext context(MakeGrid(GridShape{1, 2, 2}), tunables);
    context.Start(first);
    for (int cpu = 0; cpu < 4; ++cpu) {
      EXPECT_EQ(context.rq(cpu).cpu_epoch_next, boundary) << first;
      EXPECT_EQ(context.rq(cpu).cpu_epoch, 0);
    }
  }
  ModelContext unanchored(MakeGrid(GridShape{1, 2, 2}), ModelTunables{});
  unanchored.Start(4'294'937'300);
  EXPECT_EQ(unanchored.rq(3).cpu_epoch_next, 4'294'937'300);
}

TEST(Decay, EntryFollowsItsCpuEpoch) {
  // rq at epoch 3, entry at epoch 0 with 2^40: 3 halvings give 2^37.
  RqState rq;
  rq.cpu_epoch = 3;
  CpuEntry entry{.cpu = 0, .epoch = 0, .runtime = uint64_t{1} << 40};
  CatchUpEntry(rq, entry);
  EXPECT_EQ(entry.epoch, 3);
  EXPECT_EQ(entry.runtime, uint64_t{1} << 37);
  // n = 0: unchanged.
  CatchUpEntry(rq, entry);
  EXPECT_EQ(entry.runtime, uint64_t{1} << 37);
  // 64 epochs or more clear it.
  rq.cpu_epoch = 3 + 64;
  CatchUpEntry(rq, entry);
  EXPECT_EQ(entry.runtime, 0u);
}

TEST(Occupancy, DividesByCpuRuntimePlusOne) {
  // 2^20 * 3 / (3 + 1) = 786432.
  EXPECT_EQ(OccupancyRatio(3, 3), 786432u);
  // The +1 matters: 2^20 * 1 / (1 + 1) = 524288, not 2^20.
  EXPECT_EQ(OccupancyRatio(1, 1), 524288u);
  // An idle rq (cpu_runtime 0) gives the full scale per ns: 2^20 * 1 / 1.
  EXPECT_EQ(OccupancyRatio(1, 0), 1048576u);
  // floor(2^20 * 1000 / 1001) = floor(1047528.47) = 1047528.
  EXPECT_EQ(OccupancyRatio(1000, 1000), 1047528u);
  EXPECT_EQ(OccupancyRatio(0, 5), 0u);
}

TEST(Occupancy, DoesNotWrapForLargeRuntimes) {
  // 2^20 * 2^63 = 2^83 overflows 64 bits; / (2^63 + 1) = 2^20 - 2^20 /
  // (2^63 + 1), whose floor is 2^20 - 1.
  const uint64_t big = uint64_t{1} << 63;
  EXPECT_EQ(OccupancyRatio(big, big), (uint64_t{1} << 20) - 1);
}

TEST(Occupancy, IsExactOnBothSidesOfTheSixtyFourBitProduct) {
  // 2^44 - 1 is the largest runtime whose product with 2^20 fits 64 bits:
  // (2^44 - 1) * 2^20 / 2^44 = 2^20 - 2^-24, floor 2^20 - 1.
  const uint64_t largest = (uint64_t{1} << 44) - 1;
  EXPECT_EQ(OccupancyRatio(largest, largest), (uint64_t{1} << 20) - 1);
  // One more: 2^44 * 2^20 / (2^44 + 1) = 2^20 - 2^20 / (2^44 + 1), floor
  // 2^20 - 1 again, now through the 128-bit product.
  EXPECT_EQ(OccupancyRatio(largest + 1, largest + 1), (uint64_t{1} << 20) - 1);
  // cpu_runtime = 2^64 - 1: the divisor 2^64 does not fit 64 bits.
  // 2^44 * 2^20 / 2^64 = 1; (2^44 - 1) * 2^20 / 2^64 = 1 - 2^-44, floor 0.
  EXPECT_EQ(OccupancyRatio(largest + 1, ~uint64_t{0}), 1u);
  EXPECT_EQ(OccupancyRatio(largest, ~uint64_t{0}), 0u);
}

// A context over "2 nodes x 2 LLCs x 16 CPUs, SMT 2" (LLC 0: CPUs 0-15).
struct Limits {
  explicit Limits(int64_t tolerance, bool numa_balancing = true)
      : context(MakeGrid(GridShape{2, 2, 16, 2, test_support::kLlcBytes32MiB}),
                Tunables(tolerance, numa_balancing)),
        model(context, ScanScope::kAllCpus) {}
  static ModelTunables Tunables(int64_t tolerance, bool numa_balancing) {
    ModelTunables t;
    t.aggr_tolerance = tolerance;
    t.numa_balancing = numa_balancing;
    return t;
  }
  bool InvalidNr(int64_t avg, int32_t nr_threads = 8) {
    MmState mm;
    mm.nr_running_avg = avg;
    return model.InvalidNr(mm, ProcessRef{0, 1, nr_threads, 0}, 0);
  }
  bool Exceeds(int64_t footprint_pages) {
    return model.ExceedsCapacity(ProcessRef{0, 1, 8, footprint_pages}, 0);
  }
  ModelContext context;
  KernelModel model;
};

TEST(InvalidNr, ToleranceZeroAlwaysInvalidates) {
  // scale 0: avg*2*1280 < 0*16*1024 = 0 never holds.
  Limits limits(0);
  EXPECT_TRUE(limits.InvalidNr(0));
  EXPECT_TRUE(limits.InvalidNr(5));
}

TEST(InvalidNr, ToleranceOneAllowsSixRunningThreadsOnSixteenCpusWithSmt2) {
  // 1*16*1024 = 16384; avg 6: 6*2*1280 = 15360 < 16384 valid;
  // avg 7: 17920 invalid.
  Limits limits(1);
  EXPECT_FALSE(limits.InvalidNr(6));
  EXPECT_TRUE(limits.InvalidNr(7));
}

TEST(InvalidNr, ToleranceTwoDoublesTheLimit) {
  // 2*16*1024 = 32768; avg 12: 30720 valid; avg 13: 33280 invalid.
  Limits limits(2);
  EXPECT_FALSE(limits.InvalidNr(12));
  EXPECT_TRUE(limits.InvalidNr(13));
}

TEST(InvalidNr, ToleranceHundredIgnoresTheSizeButNotASingleThread) {
  Limits limits(100);
  EXPECT_FALSE(limits.InvalidNr(1000));
  EXPECT_TRUE(limits.InvalidNr(0, /*nr_threads=*/1));
}

TEST(InvalidNr, SingleThreadIsInvalidAtEveryTolerance) {
  for (int64_t tolerance : {0, 1, 2, 100}) {
    Limits limits(tolerance);
    EXPECT_TRUE(limits.InvalidNr(0, /*nr_threads=*/1)) << tolerance;
  }
}

TEST(ExceedsCapacity, ToleranceZeroRejectsAnyFootprint) {
  // scale 0: 32 MiB * 0 = 0 < pages*4096 for any page.
  Limits limits(0);
  EXPECT_FALSE(limits.Exceeds(0));
  EXPECT_TRUE(limits.Exceeds(1));
}

TEST(ExceedsCapacity, ToleranceOneAllowsTheLlcSize) {
  // scale 1 + 0*256 = 1: 33554432 < pages*4096 iff pages > 8192.
  Limits limits(1);
  EXPECT_FALSE(limits.Exceeds(8192));
  EXPECT_TRUE(limits.Exceeds(8193));
}

TEST(ExceedsCapacity, ToleranceTwoScalesBy257) {
  // scale 1 + 1*256 = 257: 33554432*257 = 8623489024 < pages*4096 iff
  // pages > 2105344.
  Limits limits(2);
  EXPECT_FALSE(limits.Exceeds(2105344));
  EXPECT_TRUE(limits.Exceeds(2105345));
}

TEST(ExceedsCapacity, ToleranceHundredIgnoresTheFootprint) {
  Limits limits(100);
  EXPECT_FALSE(limits.Exceeds(int64_t{1} << 40));
}

TEST(ExceedsCapacity, NeverWithoutNumaBalancing) {
  Limits limits(1, /*numa_balancing=*/false);
  EXPECT_FALSE(limits.Exceeds(int64_t{1} << 40));
}

// "4 nodes x 2 LLCs x 4 CPUs": node k holds CPUs 8k..8k+7.
class ScanMaskTest : public ::testing::Test {
 protected:
  static ModelTunables Numa(bool on) {
    ModelTunables t;
    t.numa_balancing = on;
    return t;
  }
  ModelContext numa_{MakeGrid(GridShape{4, 2, 4}), Numa(true)};
  KernelModel model_{numa_, ScanScope::kAllCpus};
};

TEST_F(ScanMaskTest, PreferredNodeOnly) {
  MmState mm;
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, 1, 9}).ToString(), "8-15");
}

TEST_F(ScanMaskTest, AddsTheNodeOfPrefCpuWhenOutside) {
  MmState mm;
  mm.pref_cpu = 20;  // node 2
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, 1, 9}).ToString(), "8-23");
  mm.pref_cpu = 12;  // inside node 1: nothing added
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, 1, 9}).ToString(), "8-15");
}

TEST_F(ScanMaskTest, AddsTheNodeOfTheCurrentCpuWhenOutside) {
  MmState mm;
  mm.pref_cpu = 20;
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, 1, 30}).ToString(), "8-31");
  mm.pref_cpu = -1;
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, 1, 2}).ToString(), "0-15");
}

TEST_F(ScanMaskTest, AllOnlineCpusWithoutAPreferredNode) {
  MmState mm;
  mm.pref_cpu = 20;
  EXPECT_EQ(model_.ScanMask(mm, ThreadRef{1, -1, 9}).ToString(), "0-31");
}

TEST(ScanMask, AllOnlineCpusWithoutNumaBalancing) {
  ModelContext context(MakeGrid(GridShape{4, 2, 4}), ModelTunables{});
  KernelModel model(context, ScanScope::kAllCpus);
  MmState mm;
  EXPECT_EQ(model.ScanMask(mm, ThreadRef{1, 1, 9}).ToString(), "0-31");
}

// Visited-scan on "1 node x 2 LLCs x 4 CPUs", P = 10 jiffies, timeout 5,
// session started at jiffy 0; every `t` below is a jiffy.
class VisitedTest : public ::testing::Test {
 protected:
  VisitedTest() { context_.Start(0); }
  static ModelTunables Tunables() {
    ModelTunables t;
    t.epoch_period_jiffies = kP;
    t.affinity_timeout_epochs = 5;
    return t;
  }
  // Charge does what the engine does for one sample.
  void Charge(int cpu, int64_t delta, int64_t now) {
    context_.Advance(cpu, now);
    model_.Account(mm_, process_, cpu, delta);
    context_.mutable_rq(cpu).cpu_runtime += static_cast<uint64_t>(delta);
  }
  ModelContext context_{MakeGrid(GridShape{1, 2, 4}), Tunables()};
  KernelModel model_{context_, ScanScope::kVisitedCpus};
  MmState mm_;
  ProcessRef process_{0, 7, 4, 0};
};

TEST_F(VisitedTest, KeepsACpuAtExactlyTheTimeout) {
  Charge(1, 1000, 0);  // epoch 0: last visit 0
  ASSERT_THAT(VisitedCpus(mm_), ElementsAre(1));
  // t = 50: ceil(50/10) = 5 epochs; 5 - 0 > 5 is false: kept. Entry and rq
  // both decay to 1000 >> 5 = 31: 2^20 * 31 / 32 = 1015808.
  EXPECT_EQ(model_.Occupancy(mm_, 1, 50), 1015808u);
  EXPECT_THAT(VisitedCpus(mm_), ElementsAre(1));
}

TEST_F(VisitedTest, KeepsTheSetWhenANewCpuSortsBeforeVisitedOnes) {
  // The set names entries by their index in the CPU-sorted entries: CPU
  // 1's new entry goes before CPU 3's, and CPU 3 must stay in the set.
  Charge(3, 1000, 0);
  Charge(2, 1000, 0);
  Charge(1, 1000, 0);
  ASSERT_THAT(VisitedCpus(mm_), ElementsAre(1, 2, 3));
  // Each CPU holds 2^20 * 1000 / 1001 = 1047528, all in LLC 0 (CPUs 0-3).
  const ScanOutcome outcome =
      model_.Scan(mm_, process_, ThreadRef{1, -1, 1}, 0);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(outcome.cost.cpus_scanned, 3);
  ASSERT_EQ(mm_.last_occupancy.size(), 1u);
  EXPECT_EQ(mm_.last_occupancy[0].occupancy, 3u * 1047528u);
}

TEST_F(VisitedTest, EvictsACpuOneEpochPastTheTimeout) {
  Charge(1, 1000, 0);
  // t = 51: 6 epochs; 6 - 0 > 5: evicted, occupancy 0.
  EXPECT_EQ(model_.Occupancy(mm_, 1, 51), 0u);
  EXPECT_THAT(VisitedCpus(mm_), IsEmpty());
}

TEST_F(VisitedTest, EvictsACpuWhoseLagOverflowsThirtyOneBits) {
  // The entry keeps the epochs since its last visit in 31 bits,
  // saturating. 2^31 + 2 epochs later (t = 10 * (2^31 + 2)) a wrapping lag
  // would read 2 and keep the CPU; the saturated one is past the timeout.
  Charge(1, 1000, 0);
  model_.Occupancy(mm_, 1, int64_t{10} * ((int64_t{1} << 31) + 2));
  EXPECT_THAT(VisitedCpus(mm_), IsEmpty());
}

TEST_F(VisitedTest, IdleCpuWithAFrozenEpochIsEvictedUnderTheV6Order) {
  // The v5 review's race: CPU 1 runs the process at epoch 0, then goes
  // idle, so nothing advances its rq. The process keeps running on CPU 0.
  Charge(1, 1000, 0);
  for (int64_t t = 10; t <= 100; t += 10) Charge(0, 1000, t);
  // CPU 1's epoch froze at 0: checking before the decay (v5) would see
  // 0 - 0 = 0 and keep the bit.
  ASSERT_EQ(context_.rq(1).cpu_epoch, 0);
  // A thread of the process is current on CPU 1 (it counts toward
  // nr_running even though the CPU is evicted, as the patch counts it).
  context_.mutable_rq(1).curr_group = process_.slot;
  // v6 decays first: at t = 101, ceil(101/10) = 11 epochs; 11 - 0 > 5.
  const ScanOutcome outcome =
      model_.Scan(mm_, process_, ThreadRef{1, -1, 0}, 101);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(context_.rq(1).cpu_epoch, 11);
  EXPECT_THAT(VisitedCpus(mm_), ElementsAre(0));
  // The evicted CPU still counts as scanned, as the patch counts it.
  EXPECT_EQ(outcome.cost.cpus_scanned, 2);
  EXPECT_EQ(mm_.last_nr_running, 1);
}

TEST_F(VisitedTest, FullScanVisitsEveryCpuOfTheMask) {
  KernelModel full(context_, ScanScope::kAllCpus);
  MmState mm;
  full.Account(mm, process_, 1, 1000);
  const ScanOutcome outcome = full.Scan(mm, process_, ThreadRef{1, -1, 1}, 0);
  EXPECT_EQ(outcome.cost.cpus_scanned, 8);
  EXPECT_EQ(outcome.cost.llcs_scanned, 2);
}

// Visited-scan beside full-scan on the interleaved 2-socket EPYC of
// MakeEpyc384 (LLC k: CPUs 8k..8k+7 and 192+8k..192+8k+7; socket s, NUMA
// node s: LLCs 12s..12s+11), NUMA balancing on, default tunables
// otherwise, session started at t = 0.
class VisitedEpycTest : public ::testing::Test {
 protected:
  VisitedEpycTest() { context_.Start(0); }
  static ModelTunables Tunables() {
    ModelTunables t;
    t.numa_balancing = true;
    return t;
  }
  // ChargeBoth runs 1000 ns of the process on `cpu` at t = 0 under both
  // policies, with the rq charged once, as the engine does, plus
  // `other_ns` of another process's work there.
  void ChargeBoth(int cpu, uint64_t other_ns = 0) {
    visited_.Account(visited_mm_, process_, cpu, 1000);
    full_.Account(full_mm_, process_, cpu, 1000);
    context_.mutable_rq(cpu).cpu_runtime += 1000 + other_ns;
  }
  static std::vector<int> LlcsMet(const KernelModel& model,
                                  const MmState& mm) {
    std::vector<int> llcs;
    for (const LlcOccupancy& o : model.Evidence(mm)) llcs.push_back(o.llc);
    return llcs;
  }
  ModelContext context_{test_support::MakeEpyc384(), Tunables()};
  KernelModel visited_{context_, ScanScope::kVisitedCpus};
  KernelModel full_{context_, ScanScope::kAllCpus};
  MmState visited_mm_;
  MmState full_mm_;
  ProcessRef process_{0, 7, 4, 0};
};

TEST_F(VisitedEpycTest, MeetsLlcsInTheOrderOfTheirLowestVisitedCpu) {
  // CPU 197 is in LLC 0, CPU 9 in LLC 1; each holds o = 2^20 * 1000 / 1001
  // = 1047528. Visited-scan's mask is the visited set, so it meets LLC 1
  // first (9 < 197) and LLC 0, only equal, does not win the tie. Full-scan
  // meets LLC 0 first (its lowest CPU, 0, is in the mask): 197 wins there.
  ChargeBoth(197);
  ChargeBoth(9);
  ASSERT_THAT(VisitedCpus(visited_mm_), ElementsAre(9, 197));
  const ThreadRef thread{1, -1, 9};  // no preferred node: every CPU
  ASSERT_EQ(visited_.Scan(visited_mm_, process_, thread, 0).kind,
            ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(visited_mm_.pref_cpu, 9);
  EXPECT_THAT(LlcsMet(visited_, visited_mm_), ElementsAre(1, 0));
  EXPECT_EQ(visited_mm_.last_occupancy[0].occupancy, 1047528u);
  EXPECT_EQ(visited_mm_.last_occupancy[1].occupancy, 1047528u);
  ASSERT_EQ(full_.Scan(full_mm_, process_, thread, 0).kind,
            ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(full_mm_.pref_cpu, 197);
  EXPECT_EQ(LlcsMet(full_, full_mm_).front(), 0);
}

TEST_F(VisitedEpycTest, FullScanOfTheWholeMachineKeepsOnlyOccupiedLlcs) {
  // CPU 197 (LLC 0) and CPU 9 (LLC 1) each hold 1047528 (see above). A
  // full scan of every online CPU examines all 24 LLCs in machine order
  // (LLC k's lowest CPU is 8k); the process keeps the 2 occupied ones, and
  // Evidence and the scan's own view give all 24, zeros included.
  ChargeBoth(197);
  ChargeBoth(9);
  const ScanOutcome outcome =
      full_.Scan(full_mm_, process_, ThreadRef{1, -1, 9}, 0);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(full_mm_.last_occupancy.size(), 2u);
  const std::vector<LlcOccupancy> evidence = full_.Evidence(full_mm_);
  ASSERT_EQ(evidence.size(), 24u);
  ASSERT_EQ(outcome.llc_occupancy.size(), 24u);
  for (int llc = 0; llc < 24; ++llc) {
    const uint64_t expected = llc <= 1 ? 1047528u : 0u;
    EXPECT_EQ(evidence[llc].llc, llc);
    EXPECT_EQ(evidence[llc].occupancy, expected) << "LLC " << llc;
    EXPECT_EQ(outcome.llc_occupancy[llc].llc, llc);
    EXPECT_EQ(outcome.llc_occupancy[llc].occupancy, expected);
  }
}

TEST_F(VisitedEpycTest, FullScanOfOneNodeKeepsEveryLlcItExamined) {
  // A thread that prefers node 1 (LLCs 12-23) on CPU 100 (LLC 12): the
  // mask is node 1 alone, not the machine's order, so all 12 LLCs it
  // examined are kept, zeros included.
  ChargeBoth(100);
  ASSERT_EQ(full_.Scan(full_mm_, process_, ThreadRef{1, 1, 100}, 0).kind,
            ScanOutcome::Kind::kExecuted);
  ASSERT_EQ(full_mm_.last_occupancy.size(), 12u);
  EXPECT_EQ(full_mm_.last_occupancy[0].llc, 12);
  EXPECT_EQ(full_mm_.last_occupancy[0].occupancy, 1047528u);
  EXPECT_EQ(full_mm_.last_occupancy[1].occupancy, 0u);
  EXPECT_EQ(full_.Evidence(full_mm_).size(), 12u);
}

TEST_F(VisitedEpycTest, GroupsAnLlcWhoseCpusHaveAnotherLlcBetweenThem) {
  // Visited CPUs 3, 9, 197: LLC 0 (3 and 197) has LLC 1 (9) between its
  // CPUs. LLC 0 is met first (lowest CPU 3) with both its CPUs: each holds
  // 2^20 * 1000 / 4001 = 262078 beside 3000 ns of other work, 524156 in
  // all; LLC 1 holds 2^20 * 1000 / 1001 = 1047528 and wins (more than
  // twice nothing, the current LLC being none).
  ChargeBoth(3, 3000);
  ChargeBoth(9);
  ChargeBoth(197, 3000);
  const ScanOutcome outcome =
      visited_.Scan(visited_mm_, process_, ThreadRef{1, -1, 9}, 0);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(outcome.cost.cpus_scanned, 3);
  EXPECT_EQ(outcome.cost.llcs_scanned, 2);
  EXPECT_THAT(LlcsMet(visited_, visited_mm_), ElementsAre(0, 1));
  EXPECT_EQ(visited_mm_.last_occupancy[0].occupancy, 524156u);
  EXPECT_EQ(visited_mm_.last_occupancy[1].occupancy, 1047528u);
  EXPECT_EQ(visited_mm_.pref_cpu, 9);
}

TEST_F(VisitedEpycTest, ATimedOutCpuCountsOnceWhenTheOrderIsSortedByLlc) {
  // CPU 3 (LLC 0) ran at t = 0; CPUs 9 (LLC 1) and 197 (LLC 0) at t = 60
  // ms, 6 epochs later. In CPU order LLC 0 comes back after LLC 1, so the
  // scan meets LLC 0 first (lowest CPU 3) with CPUs 3 and 197: CPU 3
  // decays to epoch ceil(60 / 10) = 6, 6 - 0 > 5, so it times out (0,
  // still scanned); 197 and 9 each hold 2^20 * 1000 / 1001 = 1047528. LLC 1
  // only ties LLC 0: 197 is preferred. Three CPUs scanned, not four.
  ChargeBoth(3);
  constexpr int64_t kLater = 60'000'000;
  for (int cpu : {9, 197}) {
    context_.Advance(cpu, kLater);
    ChargeBoth(cpu);
  }
  const ScanOutcome outcome =
      visited_.Scan(visited_mm_, process_, ThreadRef{1, -1, 9}, kLater);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(outcome.cost.cpus_scanned, 3);
  EXPECT_THAT(LlcsMet(visited_, visited_mm_), ElementsAre(0, 1));
  EXPECT_EQ(visited_mm_.last_occupancy[0].occupancy, 1047528u);
  EXPECT_EQ(visited_mm_.last_occupancy[1].occupancy, 1047528u);
  EXPECT_EQ(visited_mm_.pref_cpu, 197);
  EXPECT_THAT(VisitedCpus(visited_mm_), ElementsAre(9, 197));
}

TEST_F(VisitedEpycTest, ScansOnlyTheVisitedCpusOfTheScanMask) {
  // The thread prefers node 0 and runs on CPU 9 (node 0), no pref_cpu: the
  // mask is node 0 alone, so CPU 100 (LLC 12, node 1) is not scanned even
  // though it is visited; CPUs 9 and 200 (LLC 1, node 0) are, as one LLC.
  ChargeBoth(100);
  ChargeBoth(200);
  ChargeBoth(9);
  ASSERT_THAT(VisitedCpus(visited_mm_), ElementsAre(9, 100, 200));
  const ScanOutcome outcome =
      visited_.Scan(visited_mm_, process_, ThreadRef{1, 0, 9}, 0);
  ASSERT_EQ(outcome.kind, ScanOutcome::Kind::kExecuted);
  EXPECT_EQ(outcome.cost.cpus_scanned, 2);
  EXPECT_EQ(outcome.cost.llcs_scanned, 1);
  EXPECT_THAT(LlcsMet(visited_, visited_mm_), ElementsAre(1));
  // 2 * 1047528 on LLC 1; its first CPU met with the top occupancy wins.
  EXPECT_EQ(visited_mm_.last_occupancy[0].occupancy, 2u * 1047528u);
  EXPECT_EQ(visited_mm_.pref_cpu, 9);
  // CPU 100 stays visited: leaving it out of the mask is no time-out.
  EXPECT_THAT(VisitedCpus(visited_mm_), ElementsAre(9, 100, 200));
}

}  // namespace
}  // namespace schedcache
