#include "trace/ftrace_writer.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "events/sched_state_machine.h"
#include "trace/cgroup_path.h"

namespace schedcache {
namespace {

gzFile AsGz(void* file) { return static_cast<gzFile>(file); }

// View adapts a std::string_view for absl::StrCat, which in this Abseil
// takes absl::string_view, a separate type.
absl::string_view View(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

// Header returns "COMM-PID (TGID) [CPU] SECONDS.NANOS: EVENT: ".
std::string Header(int64_t timestamp_ns, int32_t cpu, const TraceTask& task,
                   std::string_view event) {
  const std::string tgid =
      task.tgid > 0 ? absl::StrFormat("%7d", task.tgid) : "-----";
  return absl::StrFormat("%16s-%-7d (%s) [%03d] %d.%09d: %s: ", View(task.comm),
                         task.pid, tgid, cpu, timestamp_ns / 1'000'000'000,
                         timestamp_ns % 1'000'000'000, event);
}

// StateLetters renders prev_state as ftrace does: "R" for a runnable or
// preempted task, else the letter of its lowest state bit (S D T t X Z P I).
std::string StateLetters(int64_t state) {
  if (PrevStateIsRunnable(state)) return "R";
  constexpr std::string_view kLetters = "SDTtXZPI";
  for (size_t bit = 0; bit < kLetters.size(); ++bit) {
    if (state & (int64_t{1} << bit)) return std::string(1, kLetters[bit]);
  }
  return "R";  // unreachable: PrevStateIsRunnable saw a bit of kLetters
}

}  // namespace

std::string FormatSwitchLine(int64_t timestamp_ns, int32_t cpu,
                             const TraceTask& prev, int64_t prev_state,
                             const TraceTask& next) {
  return absl::StrCat(Header(timestamp_ns, cpu, prev, "sched_switch"),
                      "prev_comm=", View(prev.comm), " prev_pid=", prev.pid,
                      " prev_prio=120 prev_state=", StateLetters(prev_state),
                      " ==> next_comm=", View(next.comm),
                      " next_pid=", next.pid, " next_prio=120\n");
}

std::string FormatMigrateLine(int64_t timestamp_ns, int32_t cpu,
                              const TraceTask& running, const TraceTask& task,
                              int32_t orig_cpu, int32_t dest_cpu) {
  return absl::StrCat(Header(timestamp_ns, cpu, running, "sched_migrate_task"),
                      "comm=", View(task.comm), " pid=", task.pid,
                      " prio=120 orig_cpu=", orig_cpu, " dest_cpu=", dest_cpu,
                      "\n");
}

std::string FormatForkLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& parent, int32_t child_pid) {
  return absl::StrCat(Header(timestamp_ns, cpu, parent, "sched_process_fork"),
                      "comm=", View(parent.comm), " pid=", parent.pid,
                      " child_comm=", View(parent.comm),
                      " child_pid=", child_pid, "\n");
}

std::string FormatExitLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& task, bool group_dead) {
  return absl::StrCat(Header(timestamp_ns, cpu, task, "sched_process_exit"),
                      "comm=", View(task.comm), " pid=", task.pid,
                      " prio=120 group_dead=", group_dead ? 1 : 0, "\n");
}

std::string FormatNewTaskLine(int64_t timestamp_ns, int32_t cpu,
                              const TraceTask& creator, int32_t pid,
                              std::string_view comm, uint64_t clone_flags,
                              int32_t oom_score_adj) {
  return absl::StrCat(Header(timestamp_ns, cpu, creator, "task_newtask"),
                      "pid=", pid, " comm=", View(comm),
                      " clone_flags=", absl::Hex(clone_flags),
                      " oom_score_adj=", oom_score_adj, "\n");
}

std::string FormatExecLine(int64_t timestamp_ns, int32_t cpu,
                           const TraceTask& task, std::string_view filename,
                           int32_t old_pid) {
  return absl::StrCat(Header(timestamp_ns, cpu, task, "sched_process_exec"),
                      "filename=", View(filename), " pid=", task.pid,
                      " old_pid=", old_pid, "\n");
}

std::string FormatKernelDecisionLine(const KernelDecision& d,
                                     std::string_view comm) {
  return absl::StrCat(
      Header(d.timestamp_ns, d.cpu, TraceTask{comm, d.tid, d.tgid},
             "schedcache_task_cache_work"),
      "pid=", d.tid, " tgid=", d.tgid, " cpu=", d.preferred_cpu,
      " scanned=", d.scanned ? 1 : 0, " nr_running_avg=", d.nr_running_avg,
      " footprint=", d.footprint, " group=", absl::Hex(d.group),
      " jiffies=", d.jiffies, " group_epoch=", d.group_epoch,
      " next_scan=", d.next_scan, " cpu_epoch=", d.cpu_epoch,
      " cpu_epoch_next=", d.cpu_epoch_next, "\n");
}

std::string FormatKernelTickLine(const KernelTick& t, std::string_view comm) {
  std::string line = absl::StrCat(
      Header(t.timestamp_ns, t.cpu, TraceTask{comm, t.tid, t.tgid},
             "schedcache_sched_tick"),
      "pid=", t.tid, " tgid=", t.tgid, " jiffies=", t.jiffies);
  // Unknown attributes are left out (trace_line.h).
  if (t.numa_node != kUnchangedNumaNode) {
    absl::StrAppend(&line, " numa_preferred_nid=", t.numa_node);
  }
  if (t.footprint_pages != kUnchangedFootprint) {
    absl::StrAppend(&line, " footprint=", t.footprint_pages);
  }
  line += '\n';
  return line;
}

std::string FormatKernelClockLine(const KernelClock& clock) {
  return absl::StrCat("# schedcache_kernel_clock: hz=", clock.hz,
                      " jiffies=", clock.jiffies, " at_ns=", clock.at_ns,
                      " epoch_period=", clock.epoch_period,
                      " cpu_epoch_next=", clock.cpu_epoch_next, "\n");
}

std::string FormatCgroupLine(int32_t tgid, std::string_view path) {
  return absl::StrCat("# schedcache_cgroup: ", tgid, " ",
                      EscapeCgroupPath(path), "\n");
}

absl::StatusOr<std::unique_ptr<FtraceWriter>> FtraceWriter::Open(
    const std::string& path) {
  // "wT": zlib's transparent mode, plain text (or zstd's bytes) through the
  // same calls.
  const char* mode = absl::EndsWith(path, ".gz") ? "wb6" : "wbT";
  gzFile file = gzopen(path.c_str(), mode);
  if (file == nullptr) {
    const int error = errno;
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create '", path,
        "': ", error != 0 ? std::strerror(error) : "out of memory"));
  }
  gzbuffer(file, 256 * 1024);
  std::unique_ptr<ZstdEncoder> zstd;
  if (absl::EndsWith(path, ".zst")) zstd = std::make_unique<ZstdEncoder>();
  return std::unique_ptr<FtraceWriter>(
      new FtraceWriter(path, file, std::move(zstd)));
}

FtraceWriter::FtraceWriter(std::string path, void* file,
                           std::unique_ptr<ZstdEncoder> zstd)
    : path_(std::move(path)), file_(file), zstd_(std::move(zstd)) {}

FtraceWriter::~FtraceWriter() {
  if (file_ != nullptr) gzclose(AsGz(file_));
}

bool FtraceWriter::WriteBytes(std::string_view bytes) {
  if (bytes.empty()) return true;
  const int written =
      gzwrite(AsGz(file_), bytes.data(), static_cast<unsigned>(bytes.size()));
  if (written == static_cast<int>(bytes.size())) return true;
  int zerror = 0;
  const char* why = gzerror(AsGz(file_), &zerror);
  error_ = absl::DataLossError(absl::StrCat(
      "writing '", path_, "' failed after ", lines_,
      " lines: ", zerror == Z_ERRNO ? std::strerror(errno) : why));
  return false;
}

bool FtraceWriter::FlushZstd() {
  zstd_out_.clear();
  if (absl::Status s = zstd_->Compress(zstd_text_, zstd_out_); !s.ok()) {
    error_ = absl::DataLossError(absl::StrCat(
        "writing '", path_, "' failed after ", lines_, " lines: ",
        s.message()));
    return false;
  }
  zstd_text_.clear();
  return WriteBytes(zstd_out_);
}

void FtraceWriter::Write(std::string_view line) {
  if (!error_.ok() || file_ == nullptr || line.empty()) return;
  if (zstd_ == nullptr) {
    if (WriteBytes(line)) ++lines_;
    return;
  }
  // Compressing a line at a time would cost a libzstd call per line.
  constexpr size_t kZstdBlockBytes = size_t{128} << 10;
  zstd_text_.append(line);
  ++lines_;
  if (zstd_text_.size() >= kZstdBlockBytes) FlushZstd();
}

absl::Status FtraceWriter::Close() {
  if (file_ == nullptr) return error_;
  if (zstd_ != nullptr && error_.ok() && FlushZstd()) {
    zstd_out_.clear();
    if (absl::Status s = zstd_->Finish(zstd_out_); !s.ok()) {
      error_ = absl::DataLossError(absl::StrCat(
          "closing '", path_, "' after ", lines_, " lines failed: ",
          s.message()));
    } else {
      WriteBytes(zstd_out_);
    }
  }
  const int result = gzclose(AsGz(file_));
  file_ = nullptr;
  if (error_.ok() && result != Z_OK) {
    error_ = absl::DataLossError(
        absl::StrCat("closing '", path_, "' after ", lines_, " lines failed: ",
                     result == Z_ERRNO ? std::strerror(errno) : "zlib error"));
  }
  return error_;
}

}  // namespace schedcache
