// ThreadTable: what the scheduler state machine knows about each thread:
// its process (tgid), its last comm, whether it has exited, and where it
// runs; and per process, how many of its threads are alive.
//
// A thread whose tgid is not known yet (ftrace without the tgid column, or a
// thread only seen as `next_pid` so far) is filed under its own pid, as the
// kernel does for a single-threaded process; when its tgid is learned later
// it moves to that process. An exited thread stops counting at once and is
// forgotten at its last switch-out, so memory follows the number of live
// threads, not the length of the input.
//
// Where a source sees tasks being created (task:task_newtask), LearnNewTask
// files the new task under its process at once, by the kernel's own rule,
// so neither a live collector's lag nor a thread's short life leaves it
// guessed (docs/LIVE.md, "Processes").
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVENTS_THREAD_TABLE_H_
#define SCHEDCACHE_EVENTS_THREAD_TABLE_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "events/event.h"

namespace schedcache {

// kCloneThread is the kernel's CLONE_THREAD flag: the new task joins its
// creator's thread group (a thread); without it the task is a process.
inline constexpr uint64_t kCloneThread = 0x00010000;

// kCloneVm is the kernel's CLONE_VM flag: the new task shares its creator's
// address space (a thread, or vfork); without it the task gets a copy, a
// new mm, and with it a new sched_cache_group.
inline constexpr uint64_t kCloneVm = 0x00000100;

// NewTaskStartsGroup says whether a task created with `clone_flags` gets a
// new sched_cache_group (kernel: dup_mm initialises the new mm's group;
// with CLONE_VM there is no new mm), docs/MODEL.md, Time in jiffies.
inline bool NewTaskStartsGroup(uint64_t clone_flags) {
  return (clone_flags & kCloneVm) == 0;
}

// NewTaskTgid returns the tgid of a task created with `clone_flags` by a
// thread of process `creator_tgid` (kernel: copy_process sets p->tgid to
// current->tgid under CLONE_THREAD, else to the task's own pid). Returns 0,
// "not known", for a thread whose creator's process is not known.
inline int32_t NewTaskTgid(int32_t pid, uint64_t clone_flags,
                           int32_t creator_tgid) {
  if ((clone_flags & kCloneThread) == 0) return pid;
  return creator_tgid > 0 ? creator_tgid : 0;
}

// ExecComm returns the comm the kernel gives a task that exec'd `filename`:
// its last path component (begin_new_exec: kbasename of bprm->filename),
// which Comm truncates to 15 characters. A filename of fexecve(2)
// ("/dev/fd/N") gives "N" here where the kernel takes the file's own name.
std::string_view ExecComm(std::string_view filename);

// ThreadInfo is the state of one thread.
struct ThreadInfo {
  int32_t tgid = 0;         // the process; the thread's own pid until known
  bool tgid_known = false;  // false: tgid is the pid fallback
  bool exited = false;      // sched_process_exit seen; no longer counted
  int32_t running_cpu = -1; // CPU it is current on, -1 when not running
  Comm comm;                // last comm seen in event fields
};

class ThreadTable {
 public:
  // Learn returns the entry of `tid`, creating it (alive) on first sight.
  // `tgid` > 0 files the thread under that process (moving it when it had
  // the pid fallback or another tgid); `tgid` <= 0 means "not known here".
  // A non-empty `comm` replaces the stored one. REQUIRES: tid > 0.
  ThreadInfo& Learn(int32_t tid, int32_t tgid, std::string_view comm);

  // LearnNewTask files task `tid`, just created with `clone_flags` by a
  // thread of `creator_tgid` (<= 0: not known), under the process
  // NewTaskTgid says, with its first comm, and returns its entry. A tid
  // still held by an exited thread that has not switched out yet keeps
  // that entry (moved to the new process): the old thread's last switch-out
  // still has to find it. REQUIRES: tid > 0.
  ThreadInfo& LearnNewTask(int32_t tid, uint64_t clone_flags,
                           int32_t creator_tgid, std::string_view comm);

  // MarkExited stops counting `tid` as alive (sched_process_exit). The entry
  // stays until Forget, because the thread still switches out once.
  void MarkExited(int32_t tid);

  // Forget drops the entry of `tid` (no-op when absent).
  void Forget(int32_t tid);

  // Find returns the entry of `tid` or nullptr.
  ThreadInfo* Find(int32_t tid);

  // LiveThreads returns the number of alive threads filed under `tgid`.
  int32_t LiveThreads(int32_t tgid) const;

  size_t size() const { return threads_.size(); }

 private:
  void Count(int32_t tgid, int32_t delta);

  absl::flat_hash_map<int32_t, ThreadInfo> threads_;
  absl::flat_hash_map<int32_t, int32_t> live_;  // tgid -> alive threads
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_THREAD_TABLE_H_
