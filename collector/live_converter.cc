#include "collector/live_converter.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "common/status_macros.h"
#include "events/thread_table.h"

namespace schedcache::host {

LiveConverter::LiveConverter(int hz, EventSink& sink, FtraceWriter* trace,
                             std::string proc_root)
    : machine_(hz, sink),
      sink_(sink),
      trace_(trace),
      tgids_(proc_root),
      cgroups_(std::move(proc_root)) {}

void LiveConverter::OnEvent(const RawSchedEvent& event) {
  held_.push_back(event);
}

void LiveConverter::OnDecision(const KernelDecision& decision) {
  held_kernel_.push_back(decision);
}

void LiveConverter::OnTick(const KernelTick& tick) {
  held_kernel_.push_back(tick);
}

int64_t LiveConverter::TimeOf(const KernelRecord& record) {
  return std::visit([](const auto& r) { return r.timestamp_ns; }, record);
}

absl::Status LiveConverter::Release(uint64_t horizon_ns) {
  // Each CPU's records are in order already; a stable sort keeps them so
  // and keeps same-time records of one CPU in ring-buffer order.
  std::stable_sort(held_.begin(), held_.end(),
                   [](const RawSchedEvent& a, const RawSchedEvent& b) {
                     return a.timestamp_ns < b.timestamp_ns;
                   });
  std::stable_sort(held_kernel_.begin(), held_kernel_.end(),
                   [](const KernelRecord& a, const KernelRecord& b) {
                     return TimeOf(a) < TimeOf(b);
                   });
  const auto end = std::lower_bound(
      held_.begin(), held_.end(), horizon_ns,
      [](const RawSchedEvent& e, uint64_t t) { return e.timestamp_ns < t; });
  const auto kernel_end = std::lower_bound(
      held_kernel_.begin(), held_kernel_.end(), horizon_ns,
      [](const KernelRecord& r, uint64_t t) {
        return static_cast<uint64_t>(TimeOf(r)) < t;
      });
  // Merge: a tracepoint record goes first at equal times (the decision is
  // taken at the work's return, after what the tracepoints saw).
  absl::Status status;
  auto it = held_.begin();
  auto kernel = held_kernel_.begin();
  while (status.ok() && (it != end || kernel != kernel_end)) {
    if (kernel == kernel_end ||
        (it != end &&
         it->timestamp_ns <= static_cast<uint64_t>(TimeOf(*kernel)))) {
      status = Convert(*it++);
    } else if (const auto* tick = std::get_if<KernelTick>(&*kernel)) {
      status = ConvertTick(*tick);
      ++kernel;
    } else {
      status = ConvertDecision(std::get<KernelDecision>(*kernel++));
    }
  }
  held_.erase(held_.begin(), it);
  held_kernel_.erase(held_kernel_.begin(), kernel);
  return status;
}

bool LiveConverter::Place(int64_t t) {
  if (t < last_ns_) {
    ++late_;
    return false;
  }
  last_ns_ = t;
  ++converted_;
  return true;
}

absl::Status LiveConverter::ConvertDecision(const KernelDecision& decision) {
  if (decision.cpu < 0) {
    ++late_;
    return absl::OkStatus();
  }
  if (!Place(decision.timestamp_ns)) return absl::OkStatus();
  ++decisions_;
  if (trace_ != nullptr) {
    const TraceTask task = Task(decision.tid);
    WriteLine(FormatKernelDecisionLine(decision, task.comm), {task.tgid});
  }
  RETURN_IF_ERROR(machine_.AdvanceTo(decision.timestamp_ns));
  return sink_.OnKernelDecision(decision);
}

absl::Status LiveConverter::ConvertTick(const KernelTick& tick) {
  if (tick.cpu < 0 || tick.tid < 0) {
    ++late_;
    return absl::OkStatus();
  }
  if (!Place(tick.timestamp_ns)) return absl::OkStatus();
  if (trace_ != nullptr) {
    const TraceTask task = Task(tick.tid);
    WriteLine(FormatKernelTickLine(tick, task.comm), {task.tgid});
  }
  if (ticks_++ == 0) {
    // The first tick ends the grid, after its ticks before it.
    RETURN_IF_ERROR(machine_.AdvanceTo(tick.timestamp_ns));
    machine_.UseRecordedTicks();
  }
  return machine_.Tick(tick);
}

absl::Status LiveConverter::Finish() {
  RETURN_IF_ERROR(Release(UINT64_MAX));
  return machine_.Finish(last_ns_);
}

absl::Status LiveConverter::Convert(const RawSchedEvent& event) {
  // CLOCK_MONOTONIC nanoseconds fit int64 for 292 years of uptime.
  const int64_t t = static_cast<int64_t>(event.timestamp_ns);
  if (event.cpu < 0) {
    ++late_;
    return absl::OkStatus();
  }
  if (!Place(t)) return absl::OkStatus();
  if (static_cast<size_t>(event.cpu) >= running_.size()) {
    running_.resize(event.cpu + 1, 0);
  }
  switch (event.kind) {
    case SchedEventKind::kSwitch:
      return ConvertSwitch(event, t);
    case SchedEventKind::kMigrate:
      if (trace_ != nullptr) {
        const TraceTask running = Task(running_[event.cpu]);
        const TraceTask task = Task(event.pid);
        WriteLine(FormatMigrateLine(t, event.cpu, running, task,
                                    event.orig_cpu, event.dest_cpu),
                  {running.tgid, task.tgid});
      }
      return machine_.AdvanceTo(t);
    case SchedEventKind::kFork: {
      if (event.child_pid > 0) {
        gone_.erase(event.child_pid);  // a new task: its tid may be reused
        // With task_newtask the child is known already and this only
        // repeats it; without, TgidOf asks /proc.
        // A child starts with its parent's comm. Copied: the second Learn
        // may move the table's entries.
        const ThreadInfo* parent = machine_.threads().Find(event.parent_pid);
        const Comm comm = parent != nullptr ? parent->comm : Comm();
        machine_.threads().Learn(event.child_pid, TgidOf(event.child_pid),
                                 comm.view());
      }
      if (trace_ != nullptr) {
        const TraceTask parent = Task(event.parent_pid);
        WriteLine(FormatForkLine(t, event.cpu, parent, event.child_pid),
                  {parent.tgid});
      }
      return machine_.AdvanceTo(t);
    }
    case SchedEventKind::kExit:
      return ConvertExit(event, t);
    case SchedEventKind::kNewTask:
      return ConvertNewTask(event, t);
    case SchedEventKind::kExec:
      return ConvertExec(event, t);
  }
  return absl::OkStatus();
}

absl::Status LiveConverter::ConvertSwitch(const RawSchedEvent& event,
                                          int64_t t) {
  const int32_t prev = event.prev_pid > 0 ? event.prev_pid : 0;
  const int32_t next = event.next_pid > 0 ? event.next_pid : 0;
  const TraceTask prev_task = Task(prev);
  const int32_t next_tgid = TgidOf(next);
  // NUL-terminated by the parser.
  const std::string_view next_comm(event.next_comm.data());
  if (trace_ != nullptr) {
    const TraceTask next_task{next_comm, next, next_tgid};
    WriteLine(
        FormatSwitchLine(t, event.cpu, prev_task, event.prev_state, next_task),
        {prev_task.tgid, next_tgid});
  }
  running_[event.cpu] = next;
  return machine_.Switch(SwitchEvent{
      .timestamp_ns = t,
      .cpu = event.cpu,
      .prev_tid = prev,
      .prev_tgid = prev_task.tgid,
      .prev_comm = {},
      .next_tid = next,
      .next_tgid = next_tgid,
      .next_comm = next_comm,
      .prev_runnable = PrevStateIsRunnable(event.prev_state)});
}

absl::Status LiveConverter::ConvertNewTask(const RawSchedEvent& event,
                                           int64_t t) {
  const TraceTask creator = Task(event.parent_pid);
  // The line first: creator.comm views the thread table, which learning
  // the new task may rehash.
  if (trace_ != nullptr) {
    WriteLine(FormatNewTaskLine(t, event.cpu, creator, event.child_pid,
                                event.child_comm.data(), event.clone_flags,
                                event.oom_score_adj),
              {creator.tgid});
  }
  if (event.child_pid > 0) {
    gone_.erase(event.child_pid);  // a new task: its tid may be reused
    tgids_.Forget(event.child_pid);
    // The kernel's rule, in trace order: no /proc read, whatever the lag.
    machine_.threads().LearnNewTask(event.child_pid, event.clone_flags,
                                    creator.tgid, event.child_comm.data());
    if (NewTaskStartsGroup(event.clone_flags)) {
      return machine_.StartProcess(t, event.child_pid);
    }
  }
  return machine_.AdvanceTo(t);
}

absl::Status LiveConverter::ConvertExec(const RawSchedEvent& event,
                                        int64_t t) {
  if (event.pid > 0) {
    // After an exec the task leads its thread group: its pid is the tgid,
    // and its comm the program's name, from here on (as trace replay does).
    machine_.threads().Learn(event.pid, event.pid, ExecComm(event.filename));
  }
  if (trace_ != nullptr) {
    WriteLine(FormatExecLine(t, event.cpu, Task(event.pid), event.filename,
                             event.old_pid),
              {});
    // The new program's cgroup, read again, after its exec line.
    if (event.pid > 0) WriteCgroup(event.pid);
  }
  if (event.pid > 0) return machine_.StartProcess(t, event.pid);
  return machine_.AdvanceTo(t);
}

absl::Status LiveConverter::ConvertExit(const RawSchedEvent& event, int64_t t) {
  TraceTask task = Task(event.pid);
  // A process too short-lived for /proc to show its tgid: the kernel says
  // its thread group is dead, and the last thread of a group to exit is
  // its leader but for a leader that called pthread_exit, so the thread is
  // taken as its own leader and the state machine ends the process (an
  // exit of a tgid the session does not track changes nothing).
  if (event.group_dead && task.tgid <= 0 && event.pid > 0) {
    machine_.threads().Learn(event.pid, event.pid, {});
    task.tgid = event.pid;
  }
  if (trace_ != nullptr) {
    WriteLine(FormatExitLine(t, event.cpu, task, event.group_dead),
              {task.tgid});
    // The process is gone: its pid may come back as another's.
    if (event.group_dead) announced_.erase(task.tgid);
  }
  RETURN_IF_ERROR(machine_.Exit(t, event.pid));
  tgids_.Forget(event.pid);
  gone_.erase(event.pid);
  return absl::OkStatus();
}

int32_t LiveConverter::TgidOf(int32_t tid) {
  if (tid <= 0) return 0;
  if (const ThreadInfo* known = machine_.threads().Find(tid);
      known != nullptr && known->tgid_known) {
    return known->tgid;
  }
  if (gone_.contains(tid)) return 0;
  const absl::StatusOr<int> tgid = tgids_.Tgid(tid);
  if (tgid.ok()) return *tgid;
  gone_.insert(tid);
  return 0;
}

void LiveConverter::WriteLine(const std::string& line,
                              std::initializer_list<int32_t> tgids) {
  for (const int32_t tgid : tgids) {
    if (tgid > 0 && !announced_.contains(tgid)) WriteCgroup(tgid);
  }
  trace_->Write(line);
}

void LiveConverter::WriteCgroup(int32_t tgid) {
  announced_.insert(tgid);
  const absl::StatusOr<std::string> path = cgroups_.Read(tgid);
  if (!path.ok()) {
    ++cgroup_unread_;
    return;
  }
  ++cgroup_paths_;
  trace_->Write(FormatCgroupLine(tgid, *path));
}

TraceTask LiveConverter::Task(int32_t tid) {
  if (tid <= 0) return TraceTask{"<idle>", 0, 0};
  const int32_t tgid = TgidOf(tid);
  const ThreadInfo* info = machine_.threads().Find(tid);
  const std::string_view comm =
      info != nullptr && !info->comm.empty() ? info->comm.view() : "<...>";
  return TraceTask{comm, tid, tgid};
}

}  // namespace schedcache::host
