// Golden tests for docs/MODEL.md, The model, "Details pinned down" that decide
// where a process starts, which clock it runs on, which SMT width invalid_nr
// uses and what counts as a decision. Derivations in the comments, in jiffies
// (HZ 250: jiffy j is [jJ, (j + 1)J) with J = 4 ms); P = 2 jiffies (HZ / 100),
// the session's first jiffy is every CPU's first cpu_epoch_next, aggr_tolerance
// 1, timeout 5 epochs (the defaults) unless a test says.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/model_context.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeGrid;
using test_support::MustMakeEngine;
using test_support::SampleAt;
using test_support::ScanNow;
using ::testing::HasSubstr;

constexpr int64_t kJ = 4'000'000;  // one jiffy (HZ 250)
constexpr int64_t kP = 2 * kJ;     // one epoch (HZ / 100 jiffies)
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

absl::StatusOr<std::vector<PolicyDecision>> RecommendAt(Engine& engine,
                                                        int32_t tgid,
                                                        int64_t ts, bool scan) {
  RecommendRequest request;
  request.tgid = tgid;
  request.scan = scan;
  request.timestamp_ns = ts;
  return engine.Recommend(request);
}

// A hybrid part: LLC 0 holds two 2-thread P-cores (CPUs 0,1 and 2,3), LLC 1
// four 1-thread E-cores (CPUs 4..7); one package, one NUMA node.
std::shared_ptr<const Topology> MakeHybrid() {
  TopologySpec spec;
  spec.source = "test hybrid";
  CacheSpec p_llc{3, test_support::kLlcBytes32MiB, CpuSet()};
  CacheSpec e_llc{3, test_support::kLlcBytes32MiB, CpuSet()};
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int core = cpu < 4 ? cpu / 2 : cpu - 2;
    spec.cpus.push_back(CpuSpec{cpu, core, 0, 0});
    (cpu < 4 ? p_llc : e_llc).cpus.Set(cpu);
  }
  spec.llcs = {p_llc, e_llc};
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? std::make_shared<const Topology>(*std::move(topology))
                       : nullptr;
}

// FourThreadsOnTheSecondLlc runs process 100's four threads on CPUs 4..7 (LLC
// 1), scans once from CPU 4 and then accounts on CPU 5 (see the derivation
// in the test below). Returns the decisions after the last sample.
std::vector<PolicyDecision> FourThreadsOnTheSecondLlc(Engine& engine) {
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(
        engine.ApplySample(SampleAt(0, 4 + i, 100, 101 + i, 1000, true, 4))
            .ok());
  }
  EXPECT_TRUE(
      engine.ApplySample(SampleAt(kJ, 4, 100, 101, 1000, true)).ok());
  EXPECT_TRUE(
      engine.ApplySample(SampleAt(2 * kJ, 5, 100, 102, 1000, false)).ok());
  auto decisions = RecommendAt(engine, 100, 0, false);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *std::move(decisions) : std::vector<PolicyDecision>{};
}

TEST(SmtThreads, InvalidNrUsesTheMachineWideWidthOnAHybridPart) {
  // t = 0: threads 101..104 tick on CPUs 4..7 (still current); the process
  // starts at CPU 4's epoch 0, and no tick is in a new epoch.
  // t = J (jiffy 1): CPU 4 reaches epoch 1 (ceil(1 / 2)); its tick
  // triggers a scan
  // (process epoch 0 < 1). invalid_nr(avg 0) passes. LLC 0 is empty, LLC 1
  // has all the occupancy and all 4 threads current: pref_cpu = 4 (its
  // runtime 500 + 1000 is the largest), nr_running 4, and with divisor
  // clamp(4 >> 2, 2, 8) = 2: nr_running_avg = 0 + (4 - 0) / 2 = 2.
  // t = 2J: an account on CPU 5 checks invalid_nr on LLC 1 (4 CPUs):
  // valid iff 2 * smt * 1280 < 1 * 4 * 1024 = 4096.
  //  - cpu_smt_num_threads (the kernel, docs/MODEL.md): smt = 2 for every
  //    CPU, so 5120 < 4096 fails: too many threads, no preference.
  //  - the E-core's own width (the old reading): smt = 1, 2560 < 4096
  //    holds and LLC 1 would stay preferred.
  auto engine = MustMakeEngine(MakeHybrid());
  ASSERT_NE(engine, nullptr);
  const std::vector<PolicyDecision> d = FourThreadsOnTheSecondLlc(*engine);
  ASSERT_EQ(d.size(), 2u);
  for (const PolicyDecision& one : d) {
    EXPECT_EQ(one.preferred_llc, -1) << one.policy;
    EXPECT_EQ(one.reason, NoPreferenceReason::kTooManyThreads) << one.policy;
    EXPECT_EQ(one.nr_running_avg, 2) << one.policy;
  }
}

TEST(SmtThreads, AMachineWithoutSmtKeepsThePreferenceOfTheSameStream) {
  // The same stream on 1-thread cores everywhere ("1 node x 2 LLCs x 4
  // CPUs", SMT 1): smt = 1, 2 * 1280 = 2560 < 4096, so LLC 1 (CPU 4) stays
  // preferred: the decision above is the machine-wide width's doing.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  const std::vector<PolicyDecision> d = FourThreadsOnTheSecondLlc(*engine);
  ASSERT_EQ(d.size(), 2u);
  for (const PolicyDecision& one : d) {
    EXPECT_EQ(one.preferred_cpu, 4) << one.policy;
    EXPECT_EQ(one.preferred_llc, 1) << one.policy;
  }
}

TEST(ProcessStart, AZeroDeltaFirstSampleStartsTheProcessAtItsCpuEpoch) {
  // t = 0: a zero-delta switch-out starts process 10 at CPU 0's epoch 0.
  // t = J: a tick on CPU 0 (jiffy 1, epoch ceil(1 / 2) = 1 > 0) triggers
  // a scan. Had
  // the process started only at this sample, its epoch would be 1 and the
  // tick would trigger nothing.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 0, false, 2)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(kJ, 0, 10, 1, 1000, true)).ok());
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.processes_tracked, 1u);
  EXPECT_EQ(report.policies[0].scans, 1u);
}

TEST(ProcessStart, AZeroDeltaStartMakesALaterAccountTimeOut) {
  // Started at epoch 0 (t = 0, delta 0); the next sample at t = 6P is in
  // epoch 6 and 6 - 0 > 5: account times the process out. Started lazily
  // at that sample (epoch 6) it would still have no data.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 0, false, 2)).ok());
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(6 * kP, 0, 10, 1, 1000, false)).ok());
  auto d = RecommendAt(*engine, 10, 0, false);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].reason, NoPreferenceReason::kTimedOut);
}

TEST(ProcessStart, HandOversAndQueriesNeverStartAProcess) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{0, 0, 10, 1}).ok());
  const auto query = RecommendAt(*engine, 10, 0, /*scan=*/true);
  EXPECT_EQ(query.status().code(), absl::StatusCode::kNotFound)
      << query.status();
  EXPECT_EQ(engine->Report().processes_tracked, 0u);
  EXPECT_EQ(engine->Report().policies[0].scans, 0u);
  // The first sample, at t = 6P (epoch 6), starts it there: the process
  // epoch is 6, so nothing has timed out; it has no preference yet.
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(6 * kP, 0, 10, 1, 1000, false, 2)).ok());
  auto d = RecommendAt(*engine, 10, 0, false);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].reason, NoPreferenceReason::kNoData);
  EXPECT_EQ(engine->Report().processes_tracked, 1u);
}

TEST(ProcessStart, OnlySampledThreadsCountAsThreadsSeen) {
  // Threads 2 and 3 of process 10 are only switched in; thread 1 is
  // sampled. With no nr_threads given, the process has 1 thread seen, so
  // the scan aborts: invalid_nr, single thread. (Counting the hand-overs
  // would give 3 threads and an executed scan.)
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{0, 1, 10, 2}).ok());
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{0, 2, 10, 3}).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true)).ok());
  auto d = RecommendAt(*engine, 10, 0, /*scan=*/true);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)[0].reason, NoPreferenceReason::kSingleThread);
  EXPECT_EQ(engine->Report().policies[0].scans_aborted, 1u);
}

// KernelTick is a tick sample of `tid` (its own process) on `cpu` at `ts`
// that carries the kernel's `jiffies` (docs/MODEL.md, Time in jiffies).
Sample KernelTickAt(int64_t ts, int cpu, int32_t tid, int64_t jiffies) {
  Sample sample = SampleAt(ts, cpu, tid, tid, 1000, true);
  sample.jiffies = jiffies;
  return sample;
}

// ScansRun is the first policy's scans past the next_scan gate, executed
// or aborted (a process of one thread aborts; next_scan moves either way).
uint64_t ScansRun(Engine& engine) {
  const PolicyReport report = engine.Report().policies[0];
  return report.scans + report.scans_aborted;
}

TEST(KernelJiffies, ASampleSJiffiesAreTheModelSNowInsteadOfTheTimestampS) {
  // Process 1 ticks on CPU 0 at t = 0, 1, 2, 3 ms: all in jiffy 0 by the
  // timestamps (no clock anchor), so the derived clock never leaves the
  // first epoch and nothing scans. The kernel's jiffies 100, 103, 104, 105:
  // the session starts at 100 (cpu_epoch_next 100, epoch 0, process epoch
  // 0); at 103, 103 > 100: ceil(3 / 2) = 2 periods, cpu_epoch 2, next 104;
  // 0 < 2 triggers, the gate is open (next_scan 0): scan 1, next_scan 105.
  // At 104, 104 > 104 is false: no trigger. At 105, one period, epoch 3,
  // next 106; 2 < 3 triggers and 105 >= 105 passes: scan 2.
  auto kernel = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  auto derived =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(derived, nullptr);
  const int64_t kMs = 1'000'000;
  const int64_t jiffies[] = {100, 103, 104, 105};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(kernel->ApplySample(KernelTickAt(i * kMs, 0, 1, jiffies[i])).ok());
    ASSERT_TRUE(derived->ApplySample(SampleAt(i * kMs, 0, 1, 1, 1000, true)).ok());
  }
  EXPECT_EQ(ScansRun(*kernel), 2u);
  EXPECT_EQ(ScansRun(*derived), 0u);
}

TEST(DeferredWork, APreemptedTickScansAtTheNextSwitchInAtItsJiffy) {
  // Thread 1 ticks on CPU 0 at jiffies 100 (the start: epoch 0, no
  // trigger) and 103 (cpu_epoch 2 > 0: a trigger), the second tick
  // preempting it. `deferred` queues the work and scans nothing; `prompt`
  // (same ticks, not preempted) scans at 103, next_scan 105. Process 2's
  // first tick on CPU 1 at 106 moves the session to 106 and starts it
  // at its CPU's epoch (no trigger). Thread 1's switch-in on CPU 0: the
  // pending work runs at 106, next_scan 108. Thread 1's tick at 107
  // (cpu_epoch 4 > 2: a trigger): 107 < 108 skips in `deferred`; in
  // `prompt` 107 >= 105 scans again.
  auto deferred =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  auto prompt = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  ASSERT_NE(deferred, nullptr);
  ASSERT_NE(prompt, nullptr);
  const int64_t kMs = 1'000'000;
  for (Engine* engine : {deferred.get(), prompt.get()}) {
    const bool preempt = engine == deferred.get();
    ASSERT_TRUE(engine->ApplySample(KernelTickAt(0, 0, 1, 100)).ok());
    Sample tick = KernelTickAt(kMs, 0, 1, 103);
    tick.preempted = preempt;
    ASSERT_TRUE(engine->ApplySample(tick).ok());
    EXPECT_EQ(ScansRun(*engine), preempt ? 0u : 1u);
    ASSERT_TRUE(engine->ApplySample(SampleAt(2 * kMs, 0, 1, 1, 1000, false))
                    .ok());
    ASSERT_TRUE(engine->ApplySample(KernelTickAt(3 * kMs, 1, 2, 106)).ok());
    EXPECT_EQ(ScansRun(*engine), preempt ? 0u : 1u);
    ASSERT_TRUE(engine->ApplyHandOver(HandOver{4 * kMs, 0, 1, 1}).ok());
    EXPECT_EQ(ScansRun(*engine), 1u);
    ASSERT_TRUE(engine->ApplySample(KernelTickAt(5 * kMs, 0, 1, 107)).ok());
    EXPECT_EQ(ScansRun(*engine), preempt ? 1u : 2u);
  }
}

TEST(DeferredWork, ATickWithWorkPendingQueuesNothing) {
  // Thread 1's tick at 103 preempts it (work pending, process epoch 2).
  // A client sends another tick of it at 105 with no switch between
  // (cpu_epoch 3 > 2 would trigger): the work is pending, so nothing is
  // queued and the process's epoch stays 2. Its first sample on CPU 1 is
  // a switch-in: the pending work runs there, at 105 (scan 1, next_scan
  // 107; CPU 1 decays from 100 to 105: 3 periods, epoch 3, next 106). Its
  // tick on CPU 1 at 107: one period more, epoch 4; 2 < 4 triggers and
  // 107 >= 107 scans: 2. Without the pending rule the tick at 105 would
  // have scanned at once.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  const int64_t kMs = 1'000'000;
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(0, 0, 1, 100)).ok());
  Sample tick = KernelTickAt(kMs, 0, 1, 103);
  tick.preempted = true;
  ASSERT_TRUE(engine->ApplySample(tick).ok());
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(2 * kMs, 0, 1, 105)).ok());
  EXPECT_EQ(ScansRun(*engine), 0u);
  ASSERT_TRUE(engine->ApplySample(SampleAt(3 * kMs, 1, 1, 1, 1000, false)).ok());
  EXPECT_EQ(ScansRun(*engine), 1u);
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(4 * kMs, 1, 1, 107)).ok());
  EXPECT_EQ(ScansRun(*engine), 2u);
}

TEST(KernelJiffies, TheSessionSJiffyNeverMovesBack) {
  // Process 1 starts on CPU 0 at jiffy 100 and scans at 103 (as above:
  // process epoch 2, next_scan 105). Process 2 ticks on CPU 1 at 108:
  // ceil(8 / 2) = 4 periods, CPU 1's epoch 4. Then process 1 ticks on CPU 1
  // carrying 104, an older reading: CPU 1 stays at epoch 4 > 2, a trigger;
  // at 104 the gate (next_scan 105) would skip, at the session's 108 it
  // passes: scan 2 (and process 2's first tick did not trigger: it started
  // at CPU 1's epoch).
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), {}, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(0, 0, 1, 100)).ok());
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(1, 0, 1, 103)).ok());
  ASSERT_EQ(ScansRun(*engine), 1u);
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(2, 1, 2, 108)).ok());
  ASSERT_EQ(ScansRun(*engine), 1u);
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(3, 1, 1, 104)).ok());
  EXPECT_EQ(ScansRun(*engine), 2u);
}

TEST(KernelJiffies, ASampleWithoutJiffiesKeepsTheLastKernelJiffy) {
  // Clock anchor: jiffy 100 at t = 0. Jiffies 100 then 103 (scan 1,
  // next_scan 105, CPU 0's next boundary 104). A switch-out without
  // jiffies at t = 40 J is jiffy 140 by the anchor; the session keeps 103.
  // Then a tick carrying 104: CPU 0's epoch stays 2 (104 > 104 is false),
  // no trigger. Had the switch-out moved the session to 140, CPU 0 would be
  // in epoch 20 and the tick would scan.
  EngineOptions options;
  options.model.clock_anchor_jiffies = 100;
  auto engine =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), options, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(0, 0, 1, 100)).ok());
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(1, 0, 1, 103)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(40 * kJ, 0, 1, 1, 1000, false)).ok());
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(40 * kJ + 1, 0, 1, 104)).ok());
  EXPECT_EQ(ScansRun(*engine), 1u);
}

TEST(KernelJiffies, JiffiesOutOfRangeOrTooFarAheadAreRejectedNamingThem) {
  EngineOptions options;
  options.model.max_clock_jump_ns = 10 * kJ;  // 10 jiffies
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), options);
  ASSERT_NE(engine, nullptr);
  const absl::Status negative = engine->ApplySample(KernelTickAt(0, 0, 1, -2));
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(negative.message(), HasSubstr("jiffies -2"));
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(0, 0, 1, 100)).ok());
  // 110 is exactly 10 jiffies ahead; 121 is 11 past 110.
  ASSERT_TRUE(engine->ApplySample(KernelTickAt(1, 0, 1, 110)).ok());
  const absl::Status far = engine->ApplySample(KernelTickAt(2, 0, 1, 121));
  EXPECT_EQ(far.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(far.message(), HasSubstr("jiffies 121 is 11 jiffies ahead"));
  EXPECT_THAT(far.message(), HasSubstr("session's jiffy 110"));
  EXPECT_EQ(engine->Report().samples_applied, 2u);
}

TEST(SessionClock, ASampleTooFarAheadIsRejectedOnItsOwn) {
  EngineOptions options;
  options.model.max_clock_jump_ns = 100;
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 2)).ok());
  // Exactly max_clock_jump_ns ahead is fine; one more is rejected, naming
  // the timestamp and the clock, and leaves the clock where it was.
  ASSERT_TRUE(engine->ApplySample(SampleAt(100, 0, 10, 1, 1000, true)).ok());
  const absl::Status far =
      engine->ApplySample(SampleAt(201, 1, 10, 1, 1000, true));
  EXPECT_EQ(far.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(far.message(), HasSubstr("timestamp_ns 201"));
  EXPECT_THAT(far.message(), HasSubstr("session clock 100"));
  EXPECT_THAT(far.message(), HasSubstr("max_clock_jump_ns is 100"));
  // CPU 1 is not blocked by the rejected sample.
  EXPECT_TRUE(engine->ApplySample(SampleAt(150, 1, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->ApplyHandOver(HandOver{251, 2, 10, 2}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine->Report().samples_applied, 3u);
}

TEST(SessionClock, TheLargestTimestampNeitherStartsNorBlocksTheSession) {
  // 2^63 - 1 is outside [0, 2^62] (ModelContext::kMaxTimestampNs): as the
  // first sample it starts nothing, and later it does not block CPU 0.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  const absl::Status first =
      engine->ApplySample(SampleAt(kInt64Max, 0, 1, 1, 1000, true));
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(first.message(), HasSubstr("timestamp_ns 9223372036854775807"));
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 1, 1, 1000, true)).ok());
  EXPECT_FALSE(
      engine->ApplySample(SampleAt(kInt64Max, 0, 1, 1, 1000, true)).ok());
  EXPECT_FALSE(engine->ApplySample(SampleAt(-1, 0, 1, 1, 1000, true)).ok());
  EXPECT_TRUE(engine->ApplySample(SampleAt(1000, 0, 1, 1, 1000, true)).ok());
}

TEST(SessionClock, HugeDeltasSaturateInsteadOfWrapping) {
  // Three samples of delta D = 2^63 - 1 on CPU 0 at t = 0, J, 2J. The tick
  // at t = J (jiffy 1, epoch 1) scans and prefers LLC 0, so only the
  // sample at t = 2J
  // runs on the preferred LLC. runtime_total = 3D saturates at 2^64 - 1
  // (wrapping would give 3D - 2^64 = 2^63 - 3, and a share above 1), so
  // the share is D / (2^64 - 1) = 0.5 (to 1e-9).
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(i * kJ, 0, 10, 1, kInt64Max, true, 2))
            .ok());
  }
  const PolicyReport full = engine->Report().policies[0];
  EXPECT_EQ(full.scans, 1u);
  EXPECT_NEAR(full.runtime_on_preferred_llc, 0.5, 1e-9);
}

TEST(SessionClock, ARecommendOutsideTheClockWindowIsRejected) {
  // The reproducer: a Recommend at 1e18 used to move the clock so far that
  // no later tick ever found a new epoch. Now it is rejected and the next
  // tick still scans: the session starts at t = P (jiffy 2, every
  // cpu_epoch_next 2); t = 2P + 1 ns is jiffy 4, epoch ceil((4 - 2) / 2) =
  // 1 > 0.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}));
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(kP, 0, 10, 1, 1000, true, 2)).ok());
  const auto far = RecommendAt(*engine, 10, 1'000'000'000'000'000'000, true);
  EXPECT_EQ(far.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      far.status().message(),
      HasSubstr("timestamp_ns 1000000000000000000 is outside [8000000"));
  const auto behind = RecommendAt(*engine, 10, kP - 1, true);
  EXPECT_EQ(behind.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(RecommendAt(*engine, 10, 0, false).ok());   // 0: the clock
  EXPECT_TRUE(RecommendAt(*engine, 10, kP, false).ok());  // the clock
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(2 * kP + 1, 0, 10, 1, 1000, true)).ok());
  EXPECT_EQ(engine->Report().policies[0].scans, 1u);
  EXPECT_EQ(engine->Report().policies[0].scans_skipped, 0u);
}

TEST(Decisions, ANoneReferenceDecidesAtEveryTrigger) {
  // Reference `none` never skips, so every trigger is a decision. Triggers:
  // the tick at t = J (jiffy 1, epoch 1 > 0: full-scan executes, prefers
  // LLC 0 and sets next_scan = 1 + 2 = jiffy 3) and the tick at t = 2J
  // (jiffy 2, CPU 0 is still in epoch 1: no trigger), the tick at t = P + J
  // (jiffy 3, epoch 2: trigger, full-scan's gate is open at jiffy 3, it
  // executes and keeps LLC 0). 2 decisions, and
  // full-scan never agrees with none's "no preference".
  auto engine =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"none", "full-scan"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 2)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(kJ, 0, 10, 1, 1000, true)).ok());
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(2 * kJ, 0, 10, 1, 1000, true)).ok());
  ASSERT_TRUE(
      engine->ApplySample(SampleAt(kP + kJ, 0, 10, 1, 1000, true)).ok());
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.policies[1].scans, 2u);
  for (const PolicyReport& policy : report.policies) {
    EXPECT_EQ(policy.decisions, 2u) << policy.name;
  }
  EXPECT_EQ(report.policies[0].agreement, 1.0);
  EXPECT_EQ(report.policies[1].agreement, 0.0);
}

TEST(Decisions, ADisabledSessionSkipsEveryTriggerAndDecidesNothing) {
  // enable = off: the tick at t = J is a trigger (epoch 1 > 0) that neither
  // cache-aware policy runs: skipped, reason disabled; no decision, so no
  // agreement share at all.
  EngineOptions options;
  options.model.enable = Enable::kOff;
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), options);
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 2)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(kJ, 0, 10, 1, 1000, true)).ok());
  const EngineReport report = engine->Report();
  for (const PolicyReport& policy : report.policies) {
    EXPECT_EQ(policy.scans, 0u) << policy.name;
    EXPECT_EQ(policy.scans_skipped, 1u) << policy.name;
    EXPECT_EQ(policy.scans_skipped_disabled, 1u) << policy.name;
    EXPECT_EQ(policy.decisions, 0u) << policy.name;
    EXPECT_FALSE(policy.agreement.has_value()) << policy.name;
  }
}

}  // namespace
}  // namespace schedcache
