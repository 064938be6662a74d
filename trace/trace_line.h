// ParseTraceLine reads one line of a scheduler trace in any of the text
// layouts schedcache replays, without allocating:
//
//   ftrace `trace` file, with the record-tgid column or without it:
//     bash-1234    (   1234) [001] d..2.  5.123456: sched_switch: prev_comm=...
//     bash-1234    [001] d..2.  5.123456: sched_switch: prev_comm=...
//   `trace-cmd report` (flags column optional; sched_switch either in the
//   kernel's field form above or the sched plugin's short form):
//     bash-1234    [001]  5.123456: sched_switch: bash:1234 [120] S ==> swapper/1:0 [120]
//   `perf script` of `perf record -e sched:...` (the event carries its
//   "sched:" system, which is how the layout is told apart; tid, no tgid):
//     bash 1234 [001]  5.123456: sched:sched_switch: prev_comm=...
//
// Header: TASK-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION: EVENT: FIELDS
// (perf script: COMM TID [CPU] SECONDS.FRACTION: sched:EVENT: FIELDS);
// the fraction has 1 to 9 digits. Comms may contain spaces, '-', ':' and
// brackets: fields are found by their keys and the header by its [CPU]
// bracket followed by a timestamp, never by splitting on spaces.
//
// schedcache's own lines (written by `schedcache record --kernel-decisions`,
// docs/LIVE.md) use the ftrace header with the event
// schedcache_task_cache_work and fixed fields, in this order:
//     pid=TID tgid=TGID cpu=PREF scanned=0|1 nr_running_avg=N footprint=N
//     group=HEX jiffies=N group_epoch=N next_scan=N cpu_epoch=N
//     cpu_epoch_next=N
// and, for each of the kernel's scheduler ticks (the header names the
// thread the tick found running, swapper/N-0 with tgid 0 for idle),
// schedcache_sched_tick with the fields
//     pid=TID tgid=TGID jiffies=N [numa_preferred_nid=N] [footprint=N]
// (the running thread's preferred NUMA node, -1 none, and its group's
// footprint in pages; each absent when unknown, as in older captures),
// and the comment `# schedcache_kernel_clock: hz=N jiffies=N at_ns=N
// epoch_period=N cpu_epoch_next=N` carries the kernel's clock. The comment
// `# schedcache_cgroup: TGID PATH` (written by every `schedcache record
// --output`) says process TGID is in cgroup PATH, escaped as
// trace/cgroup_path.h says; ParseTraceLine keeps PATH escaped.
//
// Two kernel events replay reads for what they say about processes, in the
// kernel's own field forms:
//     task_newtask: pid=N comm=COMM clone_flags=HEX oom_score_adj=N
//     sched_process_exec: filename=PATH pid=N old_pid=N
// (task_newtask runs in the creating thread: its header names the creator.)
//
// Thread contract: a pure function; the result views into `line`.
#ifndef SCHEDCACHE_TRACE_TRACE_LINE_H_
#define SCHEDCACHE_TRACE_TRACE_LINE_H_

#include <cstdint>
#include <string_view>

#include "events/event.h"

namespace schedcache {

// TraceLine is what one line says. Fields not listed for a kind are unset.
struct TraceLine {
  enum class Kind {
    kNotScheduler,  // comment, blank, or not a sched_* event: skip
    kOtherSched,    // a sched_* event replay does not use; header is valid
    kSwitch,        // sched_switch
    kMigrate,       // sched_migrate_task
    kExit,          // sched_process_exit
    kNewTask,       // task_newtask
    kExec,          // sched_process_exec
    kKernelDecision,  // schedcache_task_cache_work
    kKernelClock,     // the `# schedcache_kernel_clock:` comment
    kKernelTick,      // schedcache_sched_tick
    kCgroup,          // the `# schedcache_cgroup:` comment
    kMalformed,  // a line of one of the kinds above that does not parse
  };
  Kind kind = Kind::kNotScheduler;
  std::string_view error;  // kMalformed: what is wrong (static text)

  // Header (every kind but kNotScheduler and kMalformed).
  int64_t timestamp_ns = 0;
  int32_t cpu = 0;
  int32_t task_pid = 0;   // the task the event ran in (sched_switch: prev)
  int32_t task_tgid = 0;  // its tgid from the TGID column; 0: none or "-----"

  // kSwitch.
  std::string_view prev_comm;
  int32_t prev_pid = 0;
  std::string_view next_comm;
  int32_t next_pid = 0;
  // prev_runnable: prev_state shows prev left the CPU runnable. The kernel
  // prints "R" (or "R+", preempted) when no state bit is set and the state
  // letters (S, D, I, X, Z ...) otherwise; the sched plugin prints "R" or
  // its own letters. Any state but R means prev blocked or is dying. (A
  // .dat record: PrevStateIsRunnable of its prev_state bits.)
  bool prev_runnable = false;

  // kMigrate, kExit and kNewTask: the task named in the fields (kNewTask:
  // the new one); kExec: pid only, the task's pid after the exec.
  std::string_view comm;
  int32_t pid = 0;
  int32_t orig_cpu = 0;  // kMigrate
  int32_t dest_cpu = 0;  // kMigrate
  uint64_t clone_flags = 0;  // kNewTask
  // kExec: the program's path, and the thread's pid before the exec (another
  // thread than the leader took the leader's pid when they differ).
  std::string_view filename;
  int32_t old_pid = 0;

  // kKernelDecision: every field; timestamp_ns and cpu repeat the header's.
  KernelDecision decision;
  // kKernelTick: every field; timestamp_ns and cpu repeat the header's.
  KernelTick tick;
  // kKernelClock (no header fields).
  KernelClock clock;
  // kCgroup (no header fields): the process is `pid`, and its path, still
  // escaped (UnescapeCgroupPath), is `cgroup_path`.
  std::string_view cgroup_path;
};

TraceLine ParseTraceLine(std::string_view line);

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_TRACE_LINE_H_
