// SchedStateMachine turns a time-ordered stream of context switches into the
// model's inputs: a switch-out Sample for the thread leaving a CPU, a
// HandOver for the one entering it, tick Samples while a thread keeps
// running, a ProcessStart where a process gets a new address space, and a
// ProcessExit when a process's group leader exits. Trace replay feeds it the switches it parses; the workload
// generator feeds it the switches it simulates, so both produce exactly the
// same event shape.
//
// Accounting. Each CPU remembers its current thread and the last time that
// thread's runtime was accounted (its switch-in, then each tick). A tick or
// switch-out Sample carries the time since then, so the deltas of one
// stretch on a CPU add up exactly to its length. Before the first switch
// seen on a CPU its current thread is unknown and nothing is accounted there
// (the slice in progress when the input starts has no known beginning).
// Only stretches between a traced switch-in and the next switch count: when
// a switch's prev is not the thread the CPU was tracked as running (real
// 6.18 traces miss a few switch-ins from idle, ~50 in 150k switches), the
// tracked thread is the one switched out and the untraced stretch of prev is
// not accounted (SchedCounters::prev_mismatches counts these).
//
// Ticks follow one global grid, timestamps tick_anchor_ns + k * (1e9 / hz)
// for integer k (the start of every jiffy, events/jiffy_clock.h; a capture's
// clock header gives the anchor, else 0), the
// same on every CPU as with the kernel's jiffies (NO_HZ idle: an idle CPU
// does not tick). A running thread gets a tick at every grid point strictly
// after its switch-in and before its switch-out; a switch exactly on a grid
// point replaces that CPU's tick. Ticks of one grid point go out in CPU
// order, and every event at time t follows every tick before t, so the
// output is globally time-ordered (REQUIRES: input times never decrease).
//
// Recorded ticks. A capture of the running kernel's own ticks (sched_tick,
// docs/LIVE.md) replaces the grid: after UseRecordedTicks, AdvanceTo emits
// no tick, and Tick emits one for the thread the machine tracks on that CPU
// where the kernel ticked, with the same accounting (the time since that
// thread was last accounted there). The kernel's ticks under an emulator
// are irregular, and its scans follow them, not the grid (docs/MODEL.md,
// Agreement with the kernel). A tick that names another thread than the
// one tracked, or comes on a CPU not known yet, ticks nobody and is counted
// (SchedCounters::unmatched_ticks); an idle tick on an idle CPU is neither.
// Every recorded tick, whoever it ticks, also reads the kernel's one global
// `jiffies`: the tick's Sample carries that value, and every Sample after
// it the last value read, the closest estimate of `jiffies` where the
// kernel accounts a switch-out (docs/MODEL.md, Time in jiffies). Samples
// before the first recorded tick carry kDerivedJiffies.
// A recorded tick's Sample waits for the next event of its CPU (a tick, a
// switch, a kernel decision: ReturnToUser, or Finish) and goes out just
// before it, `preempted` when that event switches the ticked thread out
// runnable: the kernel's work queued at that tick runs only after the
// thread's next switch-in (docs/MODEL.md, Time in jiffies). A held Sample
// may go out after events of other CPUs with later times.
// A recorded tick may say the thread's NUMA attributes (KernelTick's
// numa_node and footprint_pages); its Sample carries them, and every other
// Sample leaves them unchanged.
//
// Exits. A thread that exits (sched_process_exit) stops counting in its
// process's nr_threads at once and is forgotten at its last switch-out. When
// it is a group leader (pid == tgid, and the tgid was learned, not the pid
// fallback), its process ends: a ProcessExit follows that last switch-out
// sample at the same time (or comes at the exit itself when the leader is
// not running), so the leader's last stretch is accounted and no event of
// the leader names the process after its end. A thread of the process that
// runs after its leader exited (a leader that called pthread_exit) starts
// the process again in the model.
//
// Memory: per CPU plus per live thread (ThreadTable); nothing grows with the
// length of the input.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVENTS_SCHED_STATE_MACHINE_H_
#define SCHEDCACHE_EVENTS_SCHED_STATE_MACHINE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "events/jiffy_clock.h"
#include "events/thread_table.h"

namespace schedcache {

// SwitchEvent is one context switch on `cpu` (kernel: sched_switch). A tid of
// 0 is the idle task; a tgid <= 0 means "not known" (the pid stands in).
struct SwitchEvent {
  int64_t timestamp_ns = 0;
  int32_t cpu = 0;
  int32_t prev_tid = 0;
  int32_t prev_tgid = 0;
  std::string_view prev_comm;
  int32_t next_tid = 0;
  int32_t next_tgid = 0;
  std::string_view next_comm;
  // prev_runnable: prev left the CPU runnable (preempted), as a source that
  // knows the kernel's prev_state says. A thread that exited keeps running
  // until its final switch-out: the kernel may preempt it after
  // sched_process_exit and run it again, so it (and its process) ends only
  // at a switch-out that is not runnable. false when the source cannot
  // tell: the first switch-out after the exit ends it.
  bool prev_runnable = false;
};

// PrevStateIsRunnable reads sched_switch's prev_state bits as the kernel
// reports them (__trace_sched_switch_state): a preempted task is
// TASK_REPORT_MAX (0x100, printed "R+"), a blocked or dying one has one of
// the states below it (S D T t X Z P, and 0x80 "I", an idle kernel
// thread), a runnable one none ("R").
inline bool PrevStateIsRunnable(int64_t prev_state) {
  constexpr int64_t kTaskReportMax = 0x100;
  return (prev_state & (kTaskReportMax - 1)) == 0;
}

// SchedCounters counts what the state machine emitted and what it had to
// reconcile.
struct SchedCounters {
  int64_t samples = 0;        // all Samples, ticks included
  int64_t tick_samples = 0;   // Samples with tick = true
  int64_t hand_overs = 0;
  int64_t process_exits = 0;  // ProcessExits: group leaders that exited
  int64_t process_starts = 0;  // ProcessStarts: forks with a new mm, execs
  // switches whose prev_pid was not the thread the CPU was running (lost
  // events); the tracked thread is the one switched out.
  int64_t prev_mismatches = 0;
  // switch-ins of a thread still current on another CPU; it is switched out
  // there first, so no thread is ever on two CPUs.
  int64_t moved_running_threads = 0;
  // hand-overs whose thread's tgid was not known yet, so its pid stood in
  // (a new thread before any line showed its TGID column).
  int64_t guessed_tgid_hand_overs = 0;
  // recorded ticks (Tick) whose thread was not the one tracked on the CPU:
  // they ticked nobody.
  int64_t unmatched_ticks = 0;
};

// TickAttributes are what a recorded tick says of the thread it found
// running (docs/MODEL.md, The model against the running kernel), in
// Sample's terms: kUnchanged* where the tick does not say.
struct TickAttributes {
  int32_t numa_node = kUnchangedNumaNode;
  int64_t footprint_pages = kUnchangedFootprint;
};

class SchedStateMachine {
 public:
  // REQUIRES: 1 <= hz <= 1'000'000'000, 0 <= tick_anchor_ns <= 2^62.
  // `sink` must outlive the machine.
  SchedStateMachine(int hz, EventSink& sink, int64_t tick_anchor_ns = 0);

  // AdvanceTo emits every tick strictly before `timestamp_ns`. Returns
  // InvalidArgument when the time is negative or goes backwards, or the
  // sink's error. Times are 0..INT64_MAX: no delta, grid point or sum of
  // runtimes can then overflow. The machine ticks through any gap it is
  // given; its producer bounds gaps (trace replay: kMaxClockJumpNs).
  absl::Status AdvanceTo(int64_t timestamp_ns);

  // UseRecordedTicks stops the grid for good: from now on only Tick ticks.
  void UseRecordedTicks() { recorded_ticks_ = true; }

  // Tick applies one recorded tick of the kernel on `tick.cpu`, which found
  // thread `tick.tid` running (0: idle) at `tick.jiffies`, after
  // AdvanceTo(tick.timestamp_ns); tick.tgid is not used. A tick at the very
  // time of the thread's switch-in emits nothing. Returns InvalidArgument
  // for a negative CPU, tid or jiffies, AdvanceTo's errors, or the sink's.
  // REQUIRES: UseRecordedTicks was called.
  absl::Status Tick(const KernelTick& tick);

  // ReturnToUser says the thread running on `cpu` returned to user space
  // (a kernel decision there): the Sample of a tick held on `cpu` goes out,
  // not preempted. Returns the sink's error.
  absl::Status ReturnToUser(int32_t cpu);

  // Switch applies one context switch (after the ticks before it). Returns
  // InvalidArgument for a negative CPU, a negative time or one going
  // backwards, or the sink's error.
  absl::Status Switch(const SwitchEvent& event);

  // Exit records that thread `tid` exited (kernel: sched_process_exit): its
  // process's live-thread count drops now; a group leader's process ends
  // (see "Exits" above). Returns AdvanceTo's errors or the sink's.
  absl::Status Exit(int64_t timestamp_ns, int32_t tid);

  // StartProcess says process `tgid` got a new address space (a fork
  // without CLONE_VM, NewTaskStartsGroup; or an exec, after which the task
  // leads its process): after the ticks before `timestamp_ns`, a
  // ProcessStart goes out, so the model starts the process's group where
  // the kernel does (docs/MODEL.md, Time in jiffies). Returns AdvanceTo's
  // errors or the sink's.
  absl::Status StartProcess(int64_t timestamp_ns, int32_t tgid);

  // Finish emits the ticks up to and including `end_ns`, the end of the
  // input, and every held tick, not preempted. The threads still running are not switched out.
  absl::Status Finish(int64_t end_ns);

  ThreadTable& threads() { return threads_; }
  const SchedCounters& counters() const { return counters_; }
  // runtime_ns returns the runtime emitted on each CPU (index: CPU), the sum
  // of the delta_ns of its Samples.
  const std::vector<int64_t>& runtime_ns() const { return runtime_ns_; }
  int64_t tick_ns() const { return clock_.tick_ns; }

 private:
  struct CpuState {
    bool known = false;       // a switch was seen on this CPU
    int32_t tid = 0;          // current thread; 0: idle
    int64_t accounted_ns = 0; // last time its runtime was accounted
    // A recorded tick's Sample waiting for the CPU's next event.
    std::optional<Sample> held_tick;
  };

  CpuState& Cpu(int32_t cpu);
  // SwitchOut emits the switch-out Sample of the thread running on `cpu`, if
  // any, and leaves the CPU with no known current thread. An exited thread
  // is forgotten (ending its process) unless it left `runnable`.
  absl::Status SwitchOut(int32_t cpu, int64_t timestamp_ns, bool runnable);
  // ReleaseTick emits the Sample of the tick held on `cpu`, if any, with
  // `preempted`.
  absl::Status ReleaseTick(int32_t cpu, bool preempted);
  // MissingThread is the error of a running thread with no entry.
  static absl::Status MissingThread(int32_t tid);
  // MakeSample accounts and counts the sample of `tid` running on `cpu`
  // (EmitSample's), for EmitSample or a held tick.
  Sample MakeSample(int32_t cpu, int32_t tid, const ThreadInfo& info,
                    int64_t timestamp_ns, bool tick,
                    const TickAttributes& attributes);
  // EmitSample emits the sample of `tid`, whose entry is `info` (nullptr:
  // none, an internal error), running on `cpu`, with `attributes`.
  absl::Status EmitSample(int32_t cpu, int32_t tid, const ThreadInfo* info,
                          int64_t timestamp_ns, bool tick,
                          const TickAttributes& attributes = {});
  // ForgetExited drops exited thread `tid`, which runs nowhere, and ends its
  // process at `timestamp_ns` when it is the group leader.
  absl::Status ForgetExited(int32_t tid, int64_t timestamp_ns);

  const JiffyClock clock_;  // the tick grid; its jiffy numbers are unused
  EventSink& sink_;
  ThreadTable threads_;
  std::vector<CpuState> cpus_;
  std::vector<int64_t> runtime_ns_;
  int running_cpus_ = 0;  // CPUs running a thread (not idle, not unknown)
  int64_t now_ns_ = INT64_MIN;
  int64_t next_grid_ns_ = INT64_MIN;  // first grid point not yet ticked
  bool recorded_ticks_ = false;       // UseRecordedTicks: no grid
  // The jiffies of the last recorded tick; kDerivedJiffies before the first.
  int64_t kernel_jiffies_ = kDerivedJiffies;
  SchedCounters counters_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_SCHED_STATE_MACHINE_H_
