// RawSchedEvent is one scheduler tracepoint record read from the kernel's
// ring buffer, decoded into plain fields, and SchedEventSink is where the
// live collector delivers them. The switch-to-samples state machine plugs in
// here as a sink.
//
// The tracepoints carry thread ids only: sched_switch, sched_migrate_task
// and sched_process_fork name no tgid on Linux 6.x. task_newtask's
// clone_flags say whether a new task joins its creator's process
// (events/thread_table.h, NewTaskTgid); threads older than the capture are
// asked of collector/tgid_cache.h.
#ifndef SCHEDCACHE_COLLECTOR_SCHED_EVENT_H_
#define SCHEDCACHE_COLLECTOR_SCHED_EVENT_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace schedcache::host {

enum class SchedEventKind : std::uint8_t {
  kSwitch,   // sched_switch
  kMigrate,  // sched_migrate_task
  kFork,     // sched_process_fork (also fires for a new thread)
  kExit,     // sched_process_exit
  kNewTask,  // task:task_newtask (in the creating thread)
  kExec,     // sched_process_exec
};

// The length of the kernel's task comm (TASK_COMM_LEN), NUL included.
inline constexpr int kTaskCommLength = 16;

// RawSchedEvent holds the union of the fields the tracepoints carry; a
// field a kind does not have stays at its default. Plain value, no heap but
// an exec's filename.
struct RawSchedEvent {
  SchedEventKind kind = SchedEventKind::kSwitch;
  // CLOCK_MONOTONIC nanoseconds (the instance's trace_clock is `mono`).
  std::uint64_t timestamp_ns = 0;
  // The CPU whose ring buffer held the record (for a migration: the CPU
  // that ran the migrating code, not necessarily orig_cpu or dest_cpu).
  int cpu = -1;

  // kSwitch.
  int prev_pid = -1;
  // The kernel's task state bits of prev (0 = still runnable, i.e. preempted).
  std::int64_t prev_state = 0;
  int next_pid = -1;
  // NUL-terminated (the kernel truncates comms to 15 characters).
  std::array<char, kTaskCommLength> next_comm{};

  // kMigrate and kExit: the thread that migrates or exits; kExec: the
  // thread's pid after the exec (its tgid), old_pid the one before.
  int pid = -1;
  int old_pid = -1;
  std::string filename;  // kExec: the program's path
  // kMigrate.
  int orig_cpu = -1;
  int dest_cpu = -1;
  // kFork and kNewTask: the forking thread and the new task (a process or a
  // thread). kNewTask: the new task's clone flags, comm (NUL-terminated)
  // and oom_score_adj, which the kernel's text line shows.
  int parent_pid = -1;
  int child_pid = -1;
  std::uint64_t clone_flags = 0;
  std::array<char, kTaskCommLength> child_comm{};
  int oom_score_adj = 0;
  // kExit: true when the exiting thread was the last of its thread group,
  // i.e. the process is gone.
  bool group_dead = false;

  absl::string_view next_comm_view() const { return next_comm.data(); }
  absl::string_view child_comm_view() const { return child_comm.data(); }
};

// SchedEventSink receives decoded events. Events of one CPU arrive in
// timestamp order; events of different CPUs are not merged, so a consumer
// that needs one global order merges by timestamp_ns.
class SchedEventSink {
 public:
  virtual ~SchedEventSink() = default;
  virtual void OnEvent(const RawSchedEvent& event) = 0;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_SCHED_EVENT_H_
