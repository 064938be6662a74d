// LiveConverter turns the live collector's raw tracepoint records
// (RawSchedEvent, in time order per CPU only) into the model's events
// through the same SchedStateMachine trace replay uses, so recorded and live
// input are cut into samples, ticks and hand-overs by one code path.
//
// Merging. The reader delivers each CPU's records in order but CPUs one
// after another, so records are held until Release(horizon): the caller
// passes a time before which every CPU has been read (it took the time
// before a read round), and the records older than it go out sorted by
// timestamp. A record older than one already converted (a writer that
// reserved its slot before the horizon and committed after the read) cannot
// be placed any more: it is dropped and counted as late, never silently.
//
// Processes. Records name threads only. task_newtask says, in trace order,
// which process each task created during the capture belongs to
// (ThreadTable::LearnNewTask: the kernel's CLONE_THREAD rule), so the
// converter's lag behind the kernel does not matter for them; older
// threads, and every thread on a kernel without task_newtask, are asked of
// TgidCache (/proc) at their first record (one already gone is filed under
// its own pid, as trace replay does without a TGID column).
// sched_process_fork files the child, sched_process_exec renames the
// process, sched_process_exit ends a thread and, with group_dead, its
// process. A task_newtask without CLONE_VM and every sched_process_exec
// start the process's group (SchedStateMachine::StartProcess), as trace
// replay does.
//
// Optionally every converted record is also written as ftrace text
// (trace/ftrace_writer.h), so the capture replays through `ab`. The text
// also says which cgroup each process is in (docs/LIVE.md, "Cgroup
// paths"): before the first line naming a process (its tgid in a line's
// header or a switch's next task) a `# schedcache_cgroup: TGID PATH` line
// from CgroupPaths, read then, and after its exec line another, read
// again. A process whose path cannot be read (gone already, or a cgroup
// file without the line CgroupPaths wants) gets no line and is counted in
// cgroup_unread(); it is not asked again until its exec.
//
// Kernel decisions (collector/kernel_decision_source.h) are held and released
// with the records, merged by time: each goes to the sink's
// OnKernelDecision after the ticks before it, and to the text as a
// schedcache_task_cache_work line; one older than a converted record is
// late like any other. Kernel ticks (sched_tick) are held and merged the
// same way: each goes to the text as a schedcache_sched_tick line, and from
// the first one on the state machine ticks where the kernel ticked instead
// of on its grid (SchedStateMachine, "Recorded ticks"), as replay of the
// text does.
//
// Thread contract: thread-compatible (the reader's thread).
#ifndef SCHEDCACHE_COLLECTOR_LIVE_CONVERTER_H_
#define SCHEDCACHE_COLLECTOR_LIVE_CONVERTER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "events/sched_state_machine.h"
#include "collector/cgroup_paths.h"
#include "collector/sched_event.h"
#include "collector/tgid_cache.h"
#include "trace/ftrace_writer.h"

namespace schedcache::host {

class LiveConverter : public SchedEventSink {
 public:
  // `sink` receives the model's events; `trace`, when not null, the text
  // of every converted record. Both must outlive the converter.
  // `proc_root` is where procfs is mounted (tests pass a directory).
  // REQUIRES: 1 <= hz <= 1e9.
  LiveConverter(int hz, EventSink& sink, FtraceWriter* trace,
                std::string proc_root = "/proc");

  // OnEvent holds a record until its Release.
  void OnEvent(const RawSchedEvent& event) override;
  // OnDecision holds a kernel decision until its Release.
  void OnDecision(const KernelDecision& decision);
  // OnTick holds a kernel tick until its Release.
  void OnTick(const KernelTick& tick);

  // Release converts, in time order, every held record older than
  // `horizon_ns`. Returns the state machine's or the sink's error.
  absl::Status Release(uint64_t horizon_ns);
  // Finish converts every held record and ends the state machine's input
  // at the last one (its ticks up to then go out).
  absl::Status Finish();


  const SchedCounters& counters() const { return machine_.counters(); }
  // runtime_ns: per CPU, the runtime the samples carry (SchedStateMachine).
  const std::vector<int64_t>& runtime_ns() const {
    return machine_.runtime_ns();
  }
  uint64_t converted() const { return converted_; }  // decisions included
  uint64_t decisions() const { return decisions_; }
  uint64_t ticks() const { return ticks_; }
  uint64_t late() const { return late_; }
  // cgroup_paths: `# schedcache_cgroup:` lines written; cgroup_unread:
  // processes the text names without one (their path was unreadable).
  uint64_t cgroup_paths() const { return cgroup_paths_; }
  uint64_t cgroup_unread() const { return cgroup_unread_; }
  size_t held() const { return held_.size() + held_kernel_.size(); }

 private:
  absl::Status Convert(const RawSchedEvent& event);
  // KernelRecord: a held record of the kernel decision source.
  using KernelRecord = std::variant<KernelDecision, KernelTick>;
  static int64_t TimeOf(const KernelRecord& record);
  absl::Status ConvertDecision(const KernelDecision& decision);
  absl::Status ConvertTick(const KernelTick& tick);
  // Place says whether a record at `t` can still go out (and then moves the
  // conversion's time there), or is late (and then counts it).
  bool Place(int64_t t);
  absl::Status ConvertSwitch(const RawSchedEvent& event, int64_t t);
  absl::Status ConvertExit(const RawSchedEvent& event, int64_t t);
  absl::Status ConvertNewTask(const RawSchedEvent& event, int64_t t);
  absl::Status ConvertExec(const RawSchedEvent& event, int64_t t);
  // TgidOf returns the thread's process, 0 when it is gone or unreadable.
  int32_t TgidOf(int32_t tid);
  // Task names a thread for the text output from what is known of it.
  TraceTask Task(int32_t tid);
  // WriteLine writes `line` to the text, after the cgroup line of each of
  // `tgids` not yet announced (0: unknown, none).
  void WriteLine(const std::string& line, std::initializer_list<int32_t> tgids);
  // WriteCgroup reads process `tgid`'s cgroup and writes its line, or
  // counts it unread; either way the process is announced.
  void WriteCgroup(int32_t tgid);

  SchedStateMachine machine_;
  EventSink& sink_;  // the machine's, also for the kernel decisions
  FtraceWriter* const trace_;
  TgidCache tgids_;
  CgroupPaths cgroups_;
  // Processes whose cgroup line is written (or found unreadable), until
  // their exec or the exit of their group.
  absl::flat_hash_set<int32_t> announced_;
  // Threads TgidCache found gone: not asked again (each ask is an open()
  // that fails) until their tid is seen exiting or forking anew.
  absl::flat_hash_set<int32_t> gone_;
  std::vector<RawSchedEvent> held_;
  std::vector<KernelRecord> held_kernel_;
  std::vector<int32_t> running_;  // per CPU: the tid switched in last
  int64_t last_ns_ = 0;           // time of the last converted record
  uint64_t converted_ = 0;
  uint64_t late_ = 0;
  uint64_t decisions_ = 0;
  uint64_t ticks_ = 0;
  uint64_t cgroup_paths_ = 0;
  uint64_t cgroup_unread_ = 0;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_LIVE_CONVERTER_H_
