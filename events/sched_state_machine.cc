#include "events/sched_state_machine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace schedcache {

SchedStateMachine::SchedStateMachine(int hz, EventSink& sink,
                                     int64_t tick_anchor_ns)
    : clock_{.tick_ns = TickNs(std::clamp(hz, 1, 1'000'000'000)),
             .anchor_ns = tick_anchor_ns},
      sink_(sink) {}

SchedStateMachine::CpuState& SchedStateMachine::Cpu(int32_t cpu) {
  if (static_cast<size_t>(cpu) >= cpus_.size()) {
    cpus_.resize(cpu + 1);
    runtime_ns_.resize(cpu + 1, 0);
  }
  return cpus_[cpu];
}

absl::Status SchedStateMachine::AdvanceTo(int64_t timestamp_ns) {
  if (timestamp_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "timestamp_ns ", timestamp_ns, " is negative; times start at 0"));
  }
  if (timestamp_ns < now_ns_) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp_ns ", timestamp_ns, " is before ", now_ns_,
                     ": events must come in time order"));
  }
  now_ns_ = timestamp_ns;
  if (recorded_ticks_) return absl::OkStatus();
  if (running_cpus_ == 0) {
    // Nothing ticks; restart the grid at the first point not before now.
    next_grid_ns_ = clock_.FirstTickAtOrAfter(timestamp_ns);
    return absl::OkStatus();
  }
  while (next_grid_ns_ < timestamp_ns) {
    const int64_t grid = next_grid_ns_;
    for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) {
      const CpuState& c = cpus_[cpu];
      // A thread switched in exactly on the grid point gets no tick there.
      if (!c.known || c.tid == 0 || c.accounted_ns >= grid) continue;
      ThreadInfo* info = threads_.Find(c.tid);
      RETURN_IF_ERROR(EmitSample(static_cast<int32_t>(cpu), c.tid, info, grid,
                                 /*tick=*/true));
    }
    // Past the last representable grid point no tick is left.
    next_grid_ns_ =
        grid > INT64_MAX - clock_.tick_ns ? INT64_MAX : grid + clock_.tick_ns;
  }
  return absl::OkStatus();
}

absl::Status SchedStateMachine::Tick(const KernelTick& tick) {
  if (tick.cpu < 0 || tick.tid < 0 || tick.jiffies < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tick at ", tick.timestamp_ns, " has cpu ", tick.cpu, ", tid ",
        tick.tid, ", jiffies ", tick.jiffies, ": none may be negative"));
  }
  RETURN_IF_ERROR(AdvanceTo(tick.timestamp_ns));
  Cpu(tick.cpu);
  RETURN_IF_ERROR(ReleaseTick(tick.cpu, /*preempted=*/false));
  kernel_jiffies_ = tick.jiffies;
  CpuState& c = cpus_[tick.cpu];
  if (!c.known || c.tid != tick.tid) {
    if (c.known || tick.tid != 0) ++counters_.unmatched_ticks;
    return absl::OkStatus();
  }
  // Idle, or a switch-in at this very time: nothing ran to account.
  if (tick.tid == 0 || c.accounted_ns >= tick.timestamp_ns) {
    return absl::OkStatus();
  }
  const ThreadInfo* info = threads_.Find(tick.tid);
  if (info == nullptr) return MissingThread(tick.tid);
  c.held_tick = MakeSample(tick.cpu, tick.tid, *info, tick.timestamp_ns,
                           /*tick=*/true,
                           TickAttributes{tick.numa_node, tick.footprint_pages});
  return absl::OkStatus();
}

absl::Status SchedStateMachine::ReturnToUser(int32_t cpu) {
  if (cpu < 0 || static_cast<size_t>(cpu) >= cpus_.size()) {
    return absl::OkStatus();
  }
  return ReleaseTick(cpu, /*preempted=*/false);
}

absl::Status SchedStateMachine::ReleaseTick(int32_t cpu, bool preempted) {
  std::optional<Sample>& held = cpus_[cpu].held_tick;
  if (!held) return absl::OkStatus();
  Sample sample = *std::move(held);
  held.reset();
  sample.preempted = preempted;
  return sink_.OnSample(sample);
}

absl::Status SchedStateMachine::Switch(const SwitchEvent& event) {
  if (event.cpu < 0 || event.prev_tid < 0 || event.next_tid < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("switch at ", event.timestamp_ns, " has cpu ", event.cpu,
                     ", prev_tid ", event.prev_tid, ", next_tid ",
                     event.next_tid, ": none may be negative"));
  }
  RETURN_IF_ERROR(AdvanceTo(event.timestamp_ns));
  const int64_t t = event.timestamp_ns;
  if (event.prev_tid > 0) {
    threads_.Learn(event.prev_tid, event.prev_tgid, event.prev_comm);
  }
  {
    const CpuState& c = Cpu(event.cpu);
    if (c.known && c.tid != event.prev_tid) ++counters_.prev_mismatches;
    // The ticked thread leaves runnable: preempted before its return to
    // user space.
    const bool preempted = c.held_tick && c.held_tick->tid == event.prev_tid &&
                           event.prev_runnable;
    RETURN_IF_ERROR(ReleaseTick(event.cpu, preempted));
  }
  RETURN_IF_ERROR(SwitchOut(event.cpu, t, event.prev_runnable));

  int32_t next_tgid = 0;
  if (event.next_tid > 0) {
    ThreadInfo* next =
        &threads_.Learn(event.next_tid, event.next_tgid, event.next_comm);
    if (const int32_t elsewhere = next->running_cpu; elsewhere >= 0) {
      ++counters_.moved_running_threads;
      RETURN_IF_ERROR(ReleaseTick(elsewhere, /*preempted=*/false));
      RETURN_IF_ERROR(SwitchOut(elsewhere, t, /*runnable=*/false));
      // Learn again: SwitchOut may have forgotten an exited thread.
      next = &threads_.Learn(event.next_tid, event.next_tgid,
                             std::string_view());
    }
    next->running_cpu = event.cpu;
    if (!next->tgid_known) ++counters_.guessed_tgid_hand_overs;
    next_tgid = next->tgid;
    ++running_cpus_;
  }
  CpuState& c = cpus_[event.cpu];
  c.known = true;
  c.tid = event.next_tid;
  c.accounted_ns = t;
  ++counters_.hand_overs;
  return sink_.OnHandOver(HandOver{t, event.cpu, next_tgid, event.next_tid});
}

absl::Status SchedStateMachine::Exit(int64_t timestamp_ns, int32_t tid) {
  RETURN_IF_ERROR(AdvanceTo(timestamp_ns));
  threads_.MarkExited(tid);
  const ThreadInfo* info = threads_.Find(tid);
  if (info != nullptr && info->running_cpu < 0) {
    return ForgetExited(tid, timestamp_ns);
  }
  return absl::OkStatus();
}

absl::Status SchedStateMachine::ForgetExited(int32_t tid,
                                             int64_t timestamp_ns) {
  const ThreadInfo* info = threads_.Find(tid);
  const bool leader = info->tgid_known && info->tgid == tid;
  threads_.Forget(tid);
  if (!leader) return absl::OkStatus();
  ++counters_.process_exits;
  return sink_.OnProcessExit(ProcessExit{timestamp_ns, tid});
}

absl::Status SchedStateMachine::StartProcess(int64_t timestamp_ns,
                                             int32_t tgid) {
  RETURN_IF_ERROR(AdvanceTo(timestamp_ns));
  ++counters_.process_starts;
  return sink_.OnProcessStart(ProcessStart{timestamp_ns, tgid});
}

absl::Status SchedStateMachine::Finish(int64_t end_ns) {
  for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) {
    RETURN_IF_ERROR(ReleaseTick(static_cast<int32_t>(cpu), /*preempted=*/false));
  }
  if (end_ns == INT64_MAX) return AdvanceTo(end_ns);
  RETURN_IF_ERROR(AdvanceTo(end_ns + 1));  // ticks at end_ns included
  now_ns_ = end_ns;
  return absl::OkStatus();
}

absl::Status SchedStateMachine::SwitchOut(int32_t cpu, int64_t timestamp_ns,
                                          bool runnable) {
  CpuState& c = cpus_[cpu];
  const int32_t tid = c.tid;
  const bool running = c.known && tid != 0;
  c.known = false;
  c.tid = 0;
  if (!running) return absl::OkStatus();
  --running_cpus_;
  ThreadInfo* info = threads_.Find(tid);
  RETURN_IF_ERROR(EmitSample(cpu, tid, info, timestamp_ns, /*tick=*/false));
  info->running_cpu = -1;
  if (info->exited && !runnable) return ForgetExited(tid, timestamp_ns);
  return absl::OkStatus();
}

absl::Status SchedStateMachine::MissingThread(int32_t tid) {
  // A broken invariant: running threads have entries.
  return absl::InternalError(
      absl::StrCat("running thread ", tid, " has no thread table entry"));
}

Sample SchedStateMachine::MakeSample(int32_t cpu, int32_t tid,
                                     const ThreadInfo& info,
                                     int64_t timestamp_ns, bool tick,
                                     const TickAttributes& attributes) {
  CpuState& c = cpus_[cpu];
  Sample sample;
  sample.timestamp_ns = timestamp_ns;
  sample.cpu = cpu;
  sample.tgid = info.tgid;
  sample.tid = tid;
  sample.delta_ns = timestamp_ns - c.accounted_ns;
  sample.tick = tick;
  // An exiting thread still runs, so its process has at least one thread.
  sample.nr_threads = std::max(threads_.LiveThreads(info.tgid), 1);
  sample.comm = info.comm;
  sample.jiffies = kernel_jiffies_;
  sample.numa_node = attributes.numa_node;
  sample.footprint_pages = attributes.footprint_pages;
  c.accounted_ns = timestamp_ns;
  // The deltas of one CPU cover disjoint stretches of [0, INT64_MAX], so
  // their sum cannot overflow.
  runtime_ns_[cpu] += sample.delta_ns;
  ++counters_.samples;
  if (tick) ++counters_.tick_samples;
  return sample;
}

absl::Status SchedStateMachine::EmitSample(int32_t cpu, int32_t tid,
                                           const ThreadInfo* info,
                                           int64_t timestamp_ns, bool tick,
                                           const TickAttributes& attributes) {
  if (info == nullptr) return MissingThread(tid);
  return sink_.OnSample(
      MakeSample(cpu, tid, *info, timestamp_ns, tick, attributes));
}

}  // namespace schedcache
