#include "events/sched_state_machine.h"

#include <cstdint>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;

// KernelTickAt is a recorded tick on `cpu` that found `tid` running (0:
// idle) at the kernel's `jiffies`.
KernelTick KernelTickAt(int64_t t, int cpu, int tid, int64_t jiffies = 0) {
  return KernelTick{.timestamp_ns = t, .cpu = cpu, .tgid = tid, .tid = tid,
                    .jiffies = jiffies};
}

SwitchEvent Switch(int64_t t, int cpu, int prev, int next, int next_tgid = 0) {
  SwitchEvent e;
  e.timestamp_ns = t;
  e.cpu = cpu;
  e.prev_tid = prev;
  e.next_tid = next;
  e.next_tgid = next_tgid;
  e.next_comm = "worker";
  return e;
}

TEST(SchedStateMachine, TicksOnTheGlobalGridWhileAThreadRuns) {
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);  // tick every 1 ms
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(3 * kMs + kMs / 2, 0, 10, 0)).ok());
  // Ticks at 1, 2 and 3 ms (grid points strictly inside the run), then the
  // switch-out; deltas cut the 3 ms run at those points.
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 4u);
  const int64_t want_t[] = {kMs, 2 * kMs, 3 * kMs, 3 * kMs + kMs / 2};
  const int64_t want_delta[] = {kMs / 2, kMs, kMs, kMs / 2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].delta_ns, want_delta[i]) << i;
    EXPECT_EQ(samples[i].tick, i < 3) << i;
    EXPECT_EQ(samples[i].tid, 10);
  }
  EXPECT_EQ(machine.runtime_ns()[0], 3 * kMs);
}

TEST(SchedStateMachine, TicksFollowTheClockAnchor) {
  // A capture's clock header says a jiffy began at 1.3 ms: at HZ 1000 the
  // grid is then 0.3, 1.3, 2.3, 3.3 ms. A run from 0.5 to 3.5 ms gets the
  // ticks at 1.3, 2.3 and 3.3 ms, then its switch-out.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink,
                            /*tick_anchor_ns=*/kMs + 3 * kMs / 10);
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(3 * kMs + kMs / 2, 0, 10, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 4u);
  const int64_t want_t[] = {1'300'000, 2'300'000, 3'300'000, 3'500'000};
  const int64_t want_delta[] = {800'000, kMs, kMs, 200'000};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].delta_ns, want_delta[i]) << i;
    EXPECT_EQ(samples[i].tick, i < 3) << i;
  }
}

TEST(SchedStateMachine, RecordedTicksReplaceTheGridWhereTheKernelTicked) {
  // HZ 1000 would tick at 1, 2, ... 9 ms. With recorded ticks, thread 10
  // running on CPU 0 from 0.5 ms to 9.5 ms gets ticks only at the kernel's
  // 1.2, 3.7 and 8.1 ms (irregular, as under an emulator), each carrying
  // the time since the last accounting: 1.2 - 0.5 = 0.7, 3.7 - 1.2 = 2.5,
  // 8.1 - 3.7 = 4.4 ms, and the switch-out 9.5 - 8.1 = 1.4 ms; the sum is
  // the 9 ms run.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(1'200'000, 0, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(3'700'000, 0, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(8'100'000, 0, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(9'500'000, 0, 10, 0)).ok());
  ASSERT_TRUE(machine.Finish(12 * kMs).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 4u);
  const int64_t want_t[] = {1'200'000, 3'700'000, 8'100'000, 9'500'000};
  const int64_t want_delta[] = {700'000, 2'500'000, 4'400'000, 1'400'000};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].delta_ns, want_delta[i]) << i;
    EXPECT_EQ(samples[i].tick, i < 3) << i;
  }
  EXPECT_EQ(machine.runtime_ns()[0], 9 * kMs);
  EXPECT_EQ(machine.counters().tick_samples, 3);
  EXPECT_EQ(machine.counters().unmatched_ticks, 0);
}

TEST(SchedStateMachine, RecordedTickSaysWhetherItsThreadWasPreempted) {
  // Thread 10 runs on CPU 0 from 1 ms. Its tick at 2 ms is followed on
  // CPU 0 by its tick at 3 ms: not preempted. The tick at 3 ms is followed
  // by a tick of CPU 1 at 3.5 ms (another CPU: the tick still waits), then
  // by 10's switch-out runnable at 4 ms: preempted, and it goes out just
  // before that switch-out. Thread 10 runs again from 5 ms; its tick at
  // 6 ms is followed by its blocking switch-out at 7 ms: not preempted.
  // CPU 1's tick has no next event on CPU 1 and goes out at Finish. Order:
  // 2, 3 (preempted), 4, 6, 7, then 3.5 ms.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(kMs, 1, 0, 11, 11)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(2 * kMs, 0, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(3 * kMs, 0, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(3 * kMs + kMs / 2, 1, 11)).ok());
  SwitchEvent preempting = Switch(4 * kMs, 0, 10, 0);
  preempting.prev_runnable = true;
  ASSERT_TRUE(machine.Switch(preempting).ok());
  ASSERT_TRUE(machine.Switch(Switch(5 * kMs, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(6 * kMs, 0, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(7 * kMs, 0, 10, 0)).ok());
  ASSERT_TRUE(machine.Finish(8 * kMs).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 6u);
  const int64_t want_t[] = {2 * kMs, 3 * kMs, 4 * kMs,
                            6 * kMs, 7 * kMs, 3 * kMs + kMs / 2};
  const bool want_preempted[] = {false, true, false, false, false, false};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].preempted, want_preempted[i]) << i;
  }
}

TEST(SchedStateMachine, ReturnToUserReleasesAHeldTickUnpreempted) {
  // Thread 10's tick at 2 ms, then a kernel decision on CPU 0 (its return
  // to user space), then its runnable switch-out at 3 ms: the decision
  // released the tick first, so it is not preempted.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(2 * kMs, 0, 10)).ok());
  ASSERT_TRUE(machine.ReturnToUser(0).ok());
  ASSERT_EQ(sink.Samples().size(), 1u);
  SwitchEvent preempting = Switch(3 * kMs, 0, 10, 0);
  preempting.prev_runnable = true;
  ASSERT_TRUE(machine.Switch(preempting).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_TRUE(samples[0].tick);
  EXPECT_FALSE(samples[0].preempted);
}

TEST(SchedStateMachine, RecordedTickCarriesItsNumaAttributesOnlyInItsSample) {
  // Thread 10 runs on CPU 0 from 1 to 5 ms. The tick at 2 ms says node 1
  // and 16095 pages; the tick at 3 ms says nothing (an older capture's
  // line); the switch-out at 5 ms is no tick. Only the first Sample
  // carries the attributes, the others leave them unchanged.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs, 0, 0, 10, 10)).ok());
  KernelTick with_attributes = KernelTickAt(2 * kMs, 0, 10);
  with_attributes.numa_node = 1;
  with_attributes.footprint_pages = 16095;
  ASSERT_TRUE(machine.Tick(with_attributes).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(3 * kMs, 0, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(5 * kMs, 0, 10, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].numa_node, 1);
  EXPECT_EQ(samples[0].footprint_pages, 16095);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(samples[i].numa_node, kUnchangedNumaNode) << i;
    EXPECT_EQ(samples[i].footprint_pages, kUnchangedFootprint) << i;
  }
}

TEST(SchedStateMachine, RecordedTickOfAnotherThreadTicksNobody) {
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs, 0, 0, 10, 10)).ok());
  // Counted, no sample: thread 11 on CPU 0 (tracked: 10), thread 12 on CPU
  // 1 (never switched: unknown), idle on CPU 0 (tracked: 10).
  ASSERT_TRUE(machine.Tick(KernelTickAt(2 * kMs, 0, 11)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(2 * kMs, 1, 12)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(3 * kMs, 0, 0)).ok());
  // Not counted, no sample: idle on CPU 2, switched to idle; the tick at
  // the very switch-in time of thread 10 on CPU 3.
  ASSERT_TRUE(machine.Switch(Switch(3 * kMs, 2, 0, 0)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(4 * kMs, 2, 0)).ok());
  ASSERT_TRUE(machine.Switch(Switch(5 * kMs, 3, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(5 * kMs, 3, 10)).ok());
  EXPECT_EQ(machine.counters().unmatched_ticks, 3);
  EXPECT_EQ(machine.counters().tick_samples, 0);
  EXPECT_FALSE(machine.Tick(KernelTickAt(6 * kMs, -1, 10)).ok());
}

TEST(SchedStateMachine, SamplesCarryTheJiffiesOfTheLastRecordedTick) {
  // Thread 10 runs on CPU 0 from 0.5 ms. Its tick at 1.2 ms read jiffies
  // 500: that sample carries 500. An idle tick on CPU 1 at 2 ms read 502,
  // so the switch-out at 2.5 ms carries 502, the last value the kernel's
  // one counter was seen at. A sample before the first recorded tick (the
  // switch-out of thread 11 at 0.8 ms) carries kDerivedJiffies.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  machine.UseRecordedTicks();
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 2, 0, 11, 11)).ok());
  ASSERT_TRUE(machine.Switch(Switch(800'000, 2, 11, 0)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(1'200'000, 0, 10, 500)).ok());
  ASSERT_TRUE(machine.Tick(KernelTickAt(2 * kMs, 1, 0, 502)).ok());
  ASSERT_TRUE(machine.Switch(Switch(2'500'000, 0, 10, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].tid, 11);
  EXPECT_EQ(samples[0].jiffies, kDerivedJiffies);
  EXPECT_TRUE(samples[1].tick);
  EXPECT_EQ(samples[1].jiffies, 500);
  EXPECT_FALSE(samples[2].tick);
  EXPECT_EQ(samples[2].jiffies, 502);
  EXPECT_FALSE(machine.Tick(KernelTickAt(3 * kMs, 0, 0, -1)).ok());
}

TEST(SchedStateMachine, GridTicksCarryDerivedJiffies) {
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1000, sink);
  ASSERT_TRUE(machine.Switch(Switch(kMs / 2, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(kMs + kMs / 2, 0, 10, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);  // the tick at 1 ms, the switch-out
  for (const Sample& sample : samples) {
    EXPECT_EQ(sample.jiffies, kDerivedJiffies);
  }
}

TEST(SchedStateMachine, SwitchOnAGridPointReplacesTheTick) {
  RecordingSink sink;
  SchedStateMachine machine(1000, sink);
  ASSERT_TRUE(machine.Switch(Switch(kMs, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(2 * kMs, 0, 10, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 1u);  // no tick at 1 ms (switch-in) or 2 ms
  EXPECT_FALSE(samples[0].tick);
  EXPECT_EQ(samples[0].delta_ns, kMs);
}

TEST(SchedStateMachine, IdleIsNeverSampledAndHandOversFollowSwitchOuts) {
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  ASSERT_TRUE(machine.Switch(Switch(100, 2, 0, 0)).ok());
  ASSERT_TRUE(machine.Switch(Switch(200, 2, 0, 7, 5)).ok());
  ASSERT_TRUE(machine.Switch(Switch(300, 2, 7, 0)).ok());
  const auto& events = sink.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(std::get<HandOver>(events[0]).tid, 0);
  const HandOver& in = std::get<HandOver>(events[1]);
  EXPECT_EQ(in.tgid, 5);
  EXPECT_EQ(in.tid, 7);
  const Sample& out = std::get<Sample>(events[2]);
  EXPECT_EQ(out.tid, 7);
  EXPECT_EQ(out.tgid, 5);
  EXPECT_EQ(out.delta_ns, 100);
  EXPECT_EQ(out.comm.view(), "worker");
  EXPECT_EQ(std::get<HandOver>(events[3]).tgid, 0);
}

TEST(SchedStateMachine, ThreadSwitchedInElsewhereLeavesItsOldCpuFirst) {
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  ASSERT_TRUE(machine.Switch(Switch(100, 0, 0, 7, 7)).ok());
  ASSERT_TRUE(machine.Switch(Switch(150, 1, 0, 7, 7)).ok());
  EXPECT_EQ(machine.counters().moved_running_threads, 1);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].cpu, 0);
  EXPECT_EQ(samples[0].delta_ns, 50);
}

TEST(SchedStateMachine, ExitDropsTheThreadFromItsProcessCount) {
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  ASSERT_TRUE(machine.Switch(Switch(100, 0, 0, 7, 5)).ok());
  ASSERT_TRUE(machine.Switch(Switch(100, 1, 0, 8, 5)).ok());
  ASSERT_TRUE(machine.Switch(Switch(200, 1, 8, 0)).ok());
  ASSERT_TRUE(machine.Exit(250, 7).ok());
  ASSERT_TRUE(machine.Switch(Switch(300, 0, 7, 0)).ok());
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].nr_threads, 2);
  EXPECT_EQ(samples[1].nr_threads, 1);
  EXPECT_EQ(machine.threads().Find(7), nullptr);  // forgotten at switch-out
}

TEST(SchedStateMachine, AnExitedThreadPreemptedBeforeItsLastSwitchEndsThen) {
  // The kernel may preempt a task after sched_process_exit and run it again
  // before its final (dead) switch-out. Leader 7 exits at 250 while running
  // on CPU 0, is preempted at 300 (runnable), runs 400..500 and leaves dead:
  // samples of 100 and 100 ns, then one ProcessExit, at 500, after both.
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  ASSERT_TRUE(machine.Switch(Switch(200, 0, 0, 7, 7)).ok());
  ASSERT_TRUE(machine.Exit(250, 7).ok());
  SwitchEvent preempted = Switch(300, 0, 7, 0);
  preempted.prev_runnable = true;
  ASSERT_TRUE(machine.Switch(preempted).ok());
  EXPECT_NE(machine.threads().Find(7), nullptr);  // still about to die
  ASSERT_TRUE(machine.Switch(Switch(400, 0, 0, 7)).ok());
  ASSERT_TRUE(machine.Switch(Switch(500, 0, 7, 0)).ok());
  EXPECT_EQ(machine.threads().Find(7), nullptr);
  std::vector<int64_t> deltas;
  int exits = 0;
  for (const auto& event : sink.events()) {
    if (const auto* sample = std::get_if<Sample>(&event)) {
      EXPECT_EQ(exits, 0) << "a sample after the process ended";
      EXPECT_EQ(sample->tgid, 7);
      deltas.push_back(sample->delta_ns);
    } else if (const auto* exit = std::get_if<ProcessExit>(&event)) {
      ++exits;
      EXPECT_EQ(exit->timestamp_ns, 500);
      EXPECT_EQ(exit->tgid, 7);
    }
  }
  EXPECT_EQ(deltas, (std::vector<int64_t>{100, 100}));
  EXPECT_EQ(exits, 1);
}

TEST(SchedStateMachine, RejectsTimeGoingBackwards) {
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  ASSERT_TRUE(machine.Switch(Switch(100, 0, 0, 7)).ok());
  EXPECT_EQ(machine.Switch(Switch(99, 1, 0, 8)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SchedStateMachine, RejectsNegativeTimes) {
  RecordingSink sink;
  SchedStateMachine machine(250, sink);
  const absl::Status status = machine.Switch(Switch(-5, 0, 0, 7));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "timestamp_ns -5 is negative; times start at 0");
  EXPECT_TRUE(sink.events().empty());
}

TEST(SchedStateMachine, TicksUpToInt64MaxWithoutOverflow) {
  // At HZ 1 the grid is every 1e9 ns. INT64_MAX is 9223372036854775807, so
  // the last grid points are ...035000000000 and ...036000000000; the next
  // (...037000000000) is past INT64_MAX. A thread switched in 2.5 s before
  // INT64_MAX gets those two ticks and no more.
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1, sink);
  const int64_t start = INT64_MAX - 2'500'000'000;  // ...034354775807
  ASSERT_TRUE(machine.Switch(Switch(start, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Switch(Switch(INT64_MAX - 1, 0, 10, 12, 12)).ok());
  ASSERT_TRUE(machine.Finish(INT64_MAX).ok());  // 12 runs; no grid point left
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].timestamp_ns, 9'223'372'035'000'000'000);
  EXPECT_EQ(samples[0].delta_ns, 645'224'193);  // 035000000000 - 034354775807
  EXPECT_EQ(samples[1].timestamp_ns, 9'223'372'036'000'000'000);
  EXPECT_EQ(samples[1].delta_ns, 1'000'000'000);
  EXPECT_FALSE(samples[2].tick);  // the switch-out at INT64_MAX - 1
  EXPECT_EQ(samples[2].delta_ns, 854'775'806);
  EXPECT_EQ(machine.runtime_ns()[0], 2'499'999'999);  // the sum of the three
}

TEST(SchedStateMachine, AStartPastTheLastGridPointNeverTicks) {
  RecordingSink sink;
  SchedStateMachine machine(/*hz=*/1, sink);
  ASSERT_TRUE(machine.Switch(Switch(INT64_MAX - 5, 0, 0, 10, 10)).ok());
  ASSERT_TRUE(machine.Finish(INT64_MAX).ok());
  EXPECT_TRUE(sink.Samples().empty());
  EXPECT_EQ(sink.HandOvers().size(), 1u);
}
}  // namespace
}  // namespace schedcache
