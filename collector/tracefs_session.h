// TracefsSession owns a private tracefs instance, `instances/schedcache-<pid>`,
// that records the scheduler tracepoints the live collector reads
// (sched_switch, sched_migrate_task, sched_process_fork, sched_process_exit,
// sched_process_exec, and task:task_newtask where the kernel has it) with
// trace_clock `mono`, so the global buffer and other tracers are
// untouched. The instance is removed by Stop() and by the destructor,
// whichever comes first.
//
// Thread contract: Stop() may be called from any thread, any number of
// times; everything else is thread-compatible. Stop() is not
// async-signal-safe (libtracefs allocates): a signal handler sets a flag or
// writes a pipe, and the thread that sees it calls Stop().
#ifndef SCHEDCACHE_COLLECTOR_TRACEFS_SESSION_H_
#define SCHEDCACHE_COLLECTOR_TRACEFS_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collector/ring_buffer_stats.h"

struct tracefs_instance;

namespace schedcache::host {

// The instance name is kInstancePrefix followed by the owner's pid.
inline constexpr char kInstancePrefix[] = "schedcache-";

struct TracefsSessionOptions {
  // Ring buffer per CPU, in KiB (buffer_size_kb). Bigger survives longer
  // reader stalls; at ~64 bytes per sched_switch record, 4096 KiB holds
  // ~65000 events per CPU.
  int buffer_size_kb = 4096;
  // buffer_percent: how full a CPU's buffer is before a poll() on its raw
  // pipe wakes the reader. The reader also wakes on its own period, so a
  // quiet CPU is still read.
  int wake_percent = 25;
};

// EnsureTracefsMounted returns the tracing directory, mounting tracefs at
// /sys/kernel/tracing when it is not mounted. Returns FailedPrecondition
// saying what is missing (not mounted, and not root so it cannot be) or
// the mount error.
absl::StatusOr<std::string> EnsureTracefsMounted();

class TracefsSession {
 public:
  // Start mounts tracefs if needed, creates the instance, sets its clock,
  // buffer size and wake-up watermark, enables exactly the events above
  // (task_newtask only if the kernel has it: new_task_enabled) and turns
  // tracing on. On any error the instance is removed again and the
  // status names the file or event and the value. An instance of the same
  // name left by an earlier process with our pid is reused after a reset.
  static absl::StatusOr<std::unique_ptr<TracefsSession>> Start(
      const TracefsSessionOptions& options);

  // Stop turns tracing off, disables the events and removes the instance.
  // Safe to call twice: once the instance is gone it returns OK. When the
  // kernel refuses the removal (a TracefsReader still has its files open)
  // it returns FailedPrecondition naming the directory and keeps the
  // instance, so a later Stop, or the destructor, tries again.
  absl::Status Stop() ABSL_LOCKS_EXCLUDED(mutex_);
  ~TracefsSession();
  TracefsSession(const TracefsSession&) = delete;
  TracefsSession& operator=(const TracefsSession&) = delete;

  const std::string& name() const { return name_; }
  // The instance's directory (…/instances/schedcache-<pid>).
  const std::string& directory() const { return directory_; }
  // The CPUs that have a ring buffer (per_cpu/cpuN), in order.
  const std::vector<int>& cpus() const { return cpus_; }
  // new_task_enabled says whether task:task_newtask records (the kernel
  // has the tracepoint and took the enable).
  bool new_task_enabled() const { return new_task_; }
  // The library handle, for TracefsReader; null after Stop.
  tracefs_instance* instance() ABSL_LOCKS_EXCLUDED(mutex_);

  // TurnOff stops recording but keeps the buffers, so a reader can drain
  // what is left before Stop removes them.
  absl::Status TurnOff() ABSL_LOCKS_EXCLUDED(mutex_);

  // ReadLostEvents sums the per-CPU stats files (overruns, dropped events).
  // Returns the parse error naming the file, or FailedPrecondition after Stop.
  absl::StatusOr<RingBufferStats> ReadLostEvents() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  TracefsSession(tracefs_instance* instance, std::string name,
                 std::string directory, std::vector<int> cpus, bool new_task);

  const std::string name_;
  const std::string directory_;
  const std::vector<int> cpus_;
  const bool new_task_;
  absl::Mutex mutex_;
  tracefs_instance* instance_ ABSL_GUARDED_BY(mutex_);
};

// RemoveStaleInstances removes `schedcache-<pid>` instances whose pid is no
// longer running (left by a collector that was killed with SIGKILL), and
// returns how many it removed. Instances of live processes, and ones whose
// name does not end in a pid, are left alone. Returns FailedPrecondition
// naming the directory when instances/ cannot be listed.
absl::StatusOr<int> RemoveStaleInstances();

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_TRACEFS_SESSION_H_
