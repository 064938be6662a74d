// FtraceWriter writes scheduler events as the text of the kernel's ftrace
// `trace` file with the record-tgid column, the layout trace replay reads
// (trace_line.h), so a live capture (`schedcache record --output`) replays
// later through `ab --input trace:` with the same accounting:
//
//   sc-busy-4242    (   4240) [001] 5182.336924123: sched_switch: prev_comm=...
//
// Times keep all nine digits of nanoseconds (ftrace prints six), so a replay
// cuts runtime at exactly the live collector's boundaries. A path ending in
// ".gz" is written gzip-compressed, one ending in ".zst" Zstandard-compressed
// (trace/zstd_stream.h); LineReader reads either by its magic.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_TRACE_FTRACE_WRITER_H_
#define SCHEDCACHE_TRACE_FTRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "events/event.h"
#include "trace/zstd_stream.h"

namespace schedcache {

// TraceTask names a task in a line: its comm, pid and tgid (0: not known,
// written "-----" as ftrace does).
struct TraceTask {
  std::string_view comm;
  int32_t pid = 0;
  int32_t tgid = 0;
};

// FormatSwitchLine and the three below return one line, newline included.
// `running` is the task current on `cpu` when the event fired (the ftrace
// header's task); prev_state is the kernel's task state bits of prev.
std::string FormatSwitchLine(int64_t timestamp_ns, int32_t cpu,
                             const TraceTask& prev, int64_t prev_state,
                             const TraceTask& next);
std::string FormatMigrateLine(int64_t timestamp_ns, int32_t cpu,
                              const TraceTask& running, const TraceTask& task,
                              int32_t orig_cpu, int32_t dest_cpu);
std::string FormatForkLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& parent, int32_t child_pid);
std::string FormatExitLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& task, bool group_dead);
// FormatNewTaskLine: task_newtask, written by `creator` (the thread that
// created task `pid`). FormatExecLine: sched_process_exec of `task`, whose
// pid before the exec was `old_pid`.
std::string FormatNewTaskLine(int64_t timestamp_ns, int32_t cpu,
                              const TraceTask& creator, int32_t pid,
                              std::string_view comm, uint64_t clone_flags,
                              int32_t oom_score_adj);
std::string FormatExecLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& task, std::string_view filename,
                           int32_t old_pid);

// FormatKernelDecisionLine returns the line of one kernel decision
// (trace_line.h: schedcache_task_cache_work), `task` being the thread the
// work ran in (decision.tid); FormatKernelClockLine the header comment of
// the kernel's clock. Newline included.
std::string FormatKernelDecisionLine(const KernelDecision& decision,
                                     std::string_view comm);
std::string FormatKernelClockLine(const KernelClock& clock);
// FormatCgroupLine returns the comment `# schedcache_cgroup: TGID PATH`
// saying process `tgid` is in cgroup `path` (trace/cgroup_path.h: the path
// escaped), newline included.
std::string FormatCgroupLine(int32_t tgid, std::string_view path);
// FormatKernelTickLine returns the line of one kernel tick (trace_line.h:
// schedcache_sched_tick), `comm` being the running thread's (idle's:
// swapper/CPU). Newline included.
std::string FormatKernelTickLine(const KernelTick& tick,
                                 std::string_view comm);

class FtraceWriter {
 public:
  // Open creates (or truncates) `path`. Returns the error naming the path.
  static absl::StatusOr<std::unique_ptr<FtraceWriter>> Open(
      const std::string& path);
  ~FtraceWriter();  // closes the file; Close reports errors, this cannot
  FtraceWriter(const FtraceWriter&) = delete;
  FtraceWriter& operator=(const FtraceWriter&) = delete;

  // Write appends one formatted line. A write error is kept: later writes
  // are skipped and Close returns it.
  void Write(std::string_view line);
  // Close flushes and closes the file. Returns DataLoss naming the path and
  // the line count written when a write or the close failed. Call once.
  absl::Status Close();

  int64_t lines() const { return lines_; }
  const std::string& path() const { return path_; }

 private:
  FtraceWriter(std::string path, void* file,
               std::unique_ptr<ZstdEncoder> zstd);
  // WriteBytes hands bytes to zlib (for a .zst file, compressed ones);
  // false, with error_ set, when that fails.
  bool WriteBytes(std::string_view bytes);
  // FlushZstd compresses the lines kept in zstd_text_ and writes them.
  bool FlushZstd();

  const std::string path_;
  void* file_;  // gzFile; null once closed
  // Set for a .zst path: lines are kept in zstd_text_ and compressed a
  // block at a time, through zlib's transparent mode.
  std::unique_ptr<ZstdEncoder> zstd_;
  std::string zstd_text_;
  std::string zstd_out_;
  int64_t lines_ = 0;
  absl::Status error_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_FTRACE_WRITER_H_
