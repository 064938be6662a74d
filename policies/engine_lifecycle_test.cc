// How processes start and leave a session: ProcessStart (the kernel's new
// group at a fork or an exec), ProcessExit, eviction at max_processes and
// after process_idle_timeout_ns, and the change to none that ends each
// preference they held.
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::MakeGrid;
using test_support::SampleAt;
using test_support::ScanNow;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Change is what a test checks of a PreferenceChange.
using Change = std::tuple<int32_t, std::string, int, int, NoPreferenceReason,
                          int64_t>;  // tgid, policy, old, new LLC, reason, ts

// LifecycleEngine is a query-trigger engine over two LLCs of four CPUs
// (LLC 1 = CPUs 4-7) that records every change.
struct LifecycleEngine {
  explicit LifecycleEngine(EngineOptions options = {}) {
    options.trigger = ScanTrigger::kQuery;
    engine = test_support::MustMakeEngine(
        MakeGrid({1, 2, 4}), options, {"full-scan", "visited-scan", "none"});
    engine->SetChangeListener([this](const PreferenceChange& c) {
      changes.emplace_back(c.tgid, std::string(c.policy), c.old_llc, c.new_llc,
                           c.reason, c.timestamp_ns);
    });
  }
  // Prefer gives process `tgid` a preference for LLC 1 under both
  // cache-aware policies at time `ts`: 4 threads (so invalid_nr passes),
  // runtime only on CPU 5, then a scan (the ChangeListener test of
  // engine_test.cc derives the same).
  void Prefer(int32_t tgid, int64_t ts) {
    ASSERT_TRUE(
        engine->ApplySample(SampleAt(ts, 5, tgid, tgid, 1000, false, 4)).ok());
    ASSERT_EQ(ScanNow(*engine, tgid, tgid, ts)[0].preferred_llc, 1);
  }
  bool Tracked(int32_t tgid) {
    RecommendRequest request;
    request.tgid = tgid;
    return engine->Recommend(request).ok();
  }

  std::unique_ptr<Engine> engine;
  std::vector<Change> changes;
};

TEST(ProcessExit, EndsEachPreferenceWithReasonExitedAndForgetsTheProcess) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(50, 1, 20, 20, 10, false)).ok());
  t.changes.clear();
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{100, 10}).ok());
  // `none` held no preference, so it says nothing.
  EXPECT_THAT(
      t.changes,
      ElementsAre(
          Change{10, "full-scan", 1, -1, NoPreferenceReason::kExited, 100},
          Change{10, "visited-scan", 1, -1, NoPreferenceReason::kExited, 100}));
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_TRUE(t.Tracked(20));
  const EngineReport report = t.engine->Report();
  EXPECT_EQ(report.exits_applied, 1u);
  EXPECT_EQ(report.processes_tracked, 1u);
  EXPECT_EQ(report.processes_evicted, 0u);
  // The policy chose nothing: its change count holds the scan's change only.
  EXPECT_EQ(report.policies[0].preferred_llc_changes, 1u);
}

TEST(ProcessExit, OfAProcessWithoutPreferenceSaysNothing) {
  LifecycleEngine t;
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(0, 1, 20, 20, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{5, 20}).ok());
  EXPECT_THAT(t.changes, IsEmpty());
  EXPECT_FALSE(t.Tracked(20));
}

TEST(ProcessExit, OfAnUnknownProcessIsAcceptedAndChangesNothing) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  t.changes.clear();
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{10, 99}).ok());
  EXPECT_THAT(t.changes, IsEmpty());
  EXPECT_TRUE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().exits_applied, 1u);
  EXPECT_EQ(t.engine->Report().processes_tracked, 1u);
}

TEST(ProcessExit, RejectsABadTgidOrTimestampAndLeavesTheProcess) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  const absl::Status zero = t.engine->ApplyProcessExit(ProcessExit{10, 0});
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("tgid 0 must be > 0"));
  const absl::Status early = t.engine->ApplyProcessExit(ProcessExit{-1, 10});
  EXPECT_THAT(early.message(), HasSubstr("timestamp_ns -1"));
  // max_clock_jump_ns defaults to 3600 s.
  const absl::Status late =
      t.engine->ApplyProcessExit(ProcessExit{3'600'000'000'001, 10});
  EXPECT_THAT(late.message(), HasSubstr("ahead of the session clock 0"));
  EXPECT_TRUE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().exits_applied, 0u);
}

TEST(ProcessExit, ALaterSampleOfTheTgidStartsAFreshProcess) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{100, 10}).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(200, 1, 10, 11, 10, false)).ok());
  RecommendRequest request;
  request.tgid = 10;
  absl::StatusOr<std::vector<PolicyDecision>> d = t.engine->Recommend(request);
  ASSERT_TRUE(d.ok()) << d.status();
  // Nothing of the old process survives: no preference, and the thread
  // count is the one thread seen, not the old process's 4.
  EXPECT_EQ((*d)[0].preferred_llc, -1);
  EXPECT_EQ((*d)[0].reason, NoPreferenceReason::kSingleThread);
  request.tid = 10;  // the old process's thread
  EXPECT_EQ(t.engine->Recommend(request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ProcessExit, ClearsTheCpuItsThreadIsCurrentOn) {
  // Thread 11 of process 10 ticks on CPU 6, so it is current there; then
  // 10 exits and a new process 10 runs threads 12 (CPU 4) and 13 (CPU 5).
  // A scan counts running threads by tgid: 2 when the exit cleared CPU 6,
  // 3 if the dead thread still counted.
  LifecycleEngine t;
  ASSERT_TRUE(
      t.engine->ApplySample(SampleAt(0, 6, 10, 11, 1000, true, 4)).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{1, 10}).ok());
  ASSERT_TRUE(
      t.engine->ApplySample(SampleAt(2, 4, 10, 12, 1000, true, 4)).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(2, 5, 10, 13, 1000, true)).ok());
  EXPECT_EQ(ScanNow(*t.engine, 10, 13, 2)[0].nr_running, 2);
}

TEST(ApplyBatch, AppliesProcessExitsInOrderWithTheOtherEvents) {
  LifecycleEngine t;
  const std::vector<Event> events = {SampleAt(0, 1, 20, 20, 10, false),
                                     ProcessExit{1, 20}, ProcessExit{2, -4},
                                     SampleAt(3, 1, 30, 30, 10, false)};
  std::vector<size_t> rejected;
  EXPECT_EQ(t.engine->ApplyBatch(
                events,
                [&](size_t i, const absl::Status&) { rejected.push_back(i); }),
            3u);
  EXPECT_THAT(rejected, ElementsAre(2u));
  EXPECT_FALSE(t.Tracked(20));
  EXPECT_TRUE(t.Tracked(30));
}

TEST(Eviction, EndsEachPreferenceOfTheEvictedProcessWithReasonEvicted) {
  EngineOptions options;
  options.max_processes = 2;
  LifecycleEngine t(options);
  t.Prefer(10, 0);
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(10, 1, 20, 20, 10, false)).ok());
  t.changes.clear();
  // A third process evicts the least recently active, 10.
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(20, 2, 30, 30, 10, false)).ok());
  EXPECT_THAT(
      t.changes,
      ElementsAre(
          Change{10, "full-scan", 1, -1, NoPreferenceReason::kEvicted, 20},
          Change{10, "visited-scan", 1, -1, NoPreferenceReason::kEvicted, 20}));
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().processes_evicted, 1u);
  EXPECT_EQ(t.engine->Report().processes_tracked, 2u);
}

TEST(IdleTimeout, EvictsAProcessWithNoSampleForLongerThanTheTimeout) {
  EngineOptions options;
  options.model.process_idle_timeout_ns = 100;
  LifecycleEngine t(options);
  t.Prefer(10, 0);
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(50, 1, 20, 20, 10, false)).ok());
  t.changes.clear();
  // At 100, 10 has had no sample for exactly 100 ns: not more, so it stays.
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(100, 1, 20, 20, 10, false)).ok());
  EXPECT_TRUE(t.Tracked(10));
  // At 101 it is evicted; 20 (sampled at 100) is not.
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(101, 1, 20, 20, 10, false)).ok());
  EXPECT_THAT(t.changes,
              ElementsAre(Change{10, "full-scan", 1, -1,
                                 NoPreferenceReason::kEvicted, 101},
                          Change{10, "visited-scan", 1, -1,
                                 NoPreferenceReason::kEvicted, 101}));
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_TRUE(t.Tracked(20));
  EXPECT_EQ(t.engine->Report().processes_evicted, 1u);
}

TEST(IdleTimeout, EvictsOnTimeAfterTheOldestProcessWasSampledAgain) {
  // Timeout 100. 10 is sampled at 0, 20 at 50, 10 again at 90: the oldest
  // last sample moves from 0 (10) to 50 (20), so 20 is due after 150,
  // whatever the engine noted when 10 was the oldest. Exits of an unknown
  // process (99) move the clock only.
  EngineOptions options;
  options.model.process_idle_timeout_ns = 100;
  LifecycleEngine t(options);
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(0, 1, 10, 10, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(50, 2, 20, 20, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(90, 1, 10, 10, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{101, 99}).ok());
  EXPECT_TRUE(t.Tracked(10));
  EXPECT_TRUE(t.Tracked(20));
  // At 150, 20 has had no sample for exactly 100 ns: it stays.
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{150, 99}).ok());
  EXPECT_TRUE(t.Tracked(20));
  // At 151 it goes; 10 (idle for 61 ns) stays, and goes after 190.
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{151, 99}).ok());
  EXPECT_FALSE(t.Tracked(20));
  EXPECT_TRUE(t.Tracked(10));
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{190, 99}).ok());
  EXPECT_TRUE(t.Tracked(10));
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{191, 99}).ok());
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().processes_evicted, 2u);
  // With none left, a process admitted later is timed from its own
  // sample (300): it stays at 400 and goes at 401.
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(300, 1, 30, 30, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{400, 99}).ok());
  EXPECT_TRUE(t.Tracked(30));
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{401, 99}).ok());
  EXPECT_FALSE(t.Tracked(30));
}

TEST(IdleTimeout, HandOversDoNotCountAsSamples) {
  // 10's thread is handed a CPU at 90, yet its last sample stays at 0: an
  // exit of an unknown process, which moves the clock to 101, evicts it.
  EngineOptions options;
  options.model.process_idle_timeout_ns = 100;
  LifecycleEngine t(options);
  t.Prefer(10, 0);
  ASSERT_TRUE(t.engine->ApplyHandOver(HandOver{90, 2, 10, 10}).ok());
  ASSERT_TRUE(t.engine->ApplyProcessExit(ProcessExit{101, 99}).ok());
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().processes_evicted, 1u);
}

TEST(IdleTimeout, ZeroNeverEvicts) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  // One max_clock_jump_ns (3600 s) later, with the default timeout 0.
  ASSERT_TRUE(
      t.engine->ApplySample(SampleAt(3'600'000'000'000, 1, 20, 20, 10, false))
          .ok());
  EXPECT_TRUE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().processes_evicted, 0u);
}

TEST(Eviction, TheLeastRecentlySampledGoesNotTheLeastRecentlyHandedOver) {
  // 10 is sampled at 0, 20 at 10; 10's thread is handed a CPU at 20. The
  // third process evicts 10: a hand-over is not a sample.
  EngineOptions options;
  options.max_processes = 2;
  LifecycleEngine t(options);
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(0, 1, 10, 10, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(10, 2, 20, 20, 10, false)).ok());
  ASSERT_TRUE(t.engine->ApplyHandOver(HandOver{20, 3, 10, 10}).ok());
  ASSERT_TRUE(t.engine->ApplySample(SampleAt(30, 4, 30, 30, 10, false)).ok());
  EXPECT_FALSE(t.Tracked(10));
  EXPECT_TRUE(t.Tracked(20));
}

constexpr int64_t kJ = 4'000'000;  // one jiffy (HZ 250, the default)

// StartStream is two processes on CPU 0 of the 2 x 4 grid (LLC 1 = CPUs
// 4-7), in the tick trigger mode, with or without a ProcessStart of process
// 20 before its first sample. Epochs are 2 jiffies and begin at jiffy 0 on
// every CPU (docs/MODEL.md):
//   t = 0        10's tick (one thread): CPU 0 at epoch 0, 10 starts at
//                epoch 0: no trigger
//   t = 3J       10's tick: CPU 0 decays to epoch 2 (ceil(3 / 2) periods);
//                0 < 2 triggers, and the scan aborts (invalid_nr: one
//                thread) before it looks at any CPU, so CPU 7 stays at 0
//   t = 3J + 1   ProcessStart of 20: CPU 7, the last CPU, has run nothing
//                and been scanned by nobody: its epoch is 0 as its rq
//                holds it (not decayed to jiffy 3, which would give 2)
//   t = 3J + 2   20's first tick on CPU 0 (epoch 2), two threads: with the
//                start, 20's group epoch is 0 < 2 and full-scan scans
//                (next_scan 0 <= jiffy 3); without it, 20 starts at CPU
//                0's epoch 2 and nothing triggers.
// Taking the epoch of CPU 0 (the first CPU, or the sample's), or CPU 7's
// decayed, would give no scan either.
std::vector<Event> StartStream(bool with_start) {
  std::vector<Event> events = {
      SampleAt(0, 0, 10, 10, 1000, true, 1),
      SampleAt(3 * kJ, 0, 10, 10, 1000, true),
  };
  if (with_start) events.push_back(ProcessStart{3 * kJ + 1, 20});
  events.push_back(SampleAt(3 * kJ + 2, 0, 20, 20, 1000, true, 2));
  return events;
}

TEST(ProcessStart, GivesTheGroupTheLastCpusEpochSoItsFirstTickScans) {
  for (const bool with_start : {false, true}) {
    auto engine =
        test_support::MustMakeEngine(MakeGrid({1, 2, 4}), {}, {"full-scan"});
    ASSERT_NE(engine, nullptr);
    const std::vector<Event> events = StartStream(with_start);
    EXPECT_EQ(engine->ApplyBatch(events,
                                 [](size_t index, const absl::Status& error) {
                                   ADD_FAILURE() << index << ": " << error;
                                 }),
              events.size());
    const EngineReport report = engine->Report();
    EXPECT_EQ(report.policies[0].scans_aborted, 1u) << with_start;
    EXPECT_EQ(report.policies[0].scans, with_start ? 1u : 0u) << with_start;
    EXPECT_EQ(report.starts_applied, with_start ? 1u : 0u);
    EXPECT_EQ(report.processes_tracked, 2u);
  }
}

TEST(ProcessStart, AnExecReplacesTheTrackedProcessWithANewGroup) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  t.changes.clear();
  ASSERT_TRUE(t.engine->ApplyProcessStart(ProcessStart{100, 10}).ok());
  // The exec replaced the group: its preferences end as at an exit.
  EXPECT_THAT(
      t.changes,
      ElementsAre(
          Change{10, "full-scan", 1, -1, NoPreferenceReason::kExited, 100},
          Change{10, "visited-scan", 1, -1, NoPreferenceReason::kExited, 100}));
  // The new group is tracked, but its thread has run nowhere yet.
  EXPECT_EQ(t.engine->Report().processes_tracked, 1u);
  RecommendRequest request;
  request.tgid = 10;
  const absl::StatusOr<std::vector<PolicyDecision>> early =
      t.engine->Recommend(request);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(early.status().message(),
              HasSubstr("tid 10 of process 10 has not run yet"));
  // With none of the old group's runtime, a scan after the next sample
  // finds CPU 1's only, in LLC 0 (the old group's CPU 5 would tie it, and
  // a tie keeps the preferred LLC 1).
  ASSERT_TRUE(
      t.engine->ApplySample(SampleAt(200, 1, 10, 10, 1000, false, 4)).ok());
  EXPECT_EQ(ScanNow(*t.engine, 10, 10, 200)[0].preferred_llc, 0);
  const EngineReport report = t.engine->Report();
  EXPECT_EQ(report.starts_applied, 1u);
  EXPECT_EQ(report.exits_applied, 0u);
}

TEST(ProcessStart, RejectsABadTgidOrTimestampAndLeavesTheProcess) {
  LifecycleEngine t;
  t.Prefer(10, 0);
  const absl::Status zero = t.engine->ApplyProcessStart(ProcessStart{10, 0});
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("tgid 0 must be > 0"));
  const absl::Status early = t.engine->ApplyProcessStart(ProcessStart{-1, 10});
  EXPECT_THAT(early.message(), HasSubstr("timestamp_ns -1"));
  EXPECT_TRUE(t.Tracked(10));
  EXPECT_EQ(t.engine->Report().starts_applied, 0u);
}

}  // namespace
}  // namespace schedcache
