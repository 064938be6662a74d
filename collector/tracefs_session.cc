#include "collector/tracefs_session.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/errno_status.h"
#include "common/status_macros.h"
#include "collector/internal/libtracefs.h"

namespace schedcache::host {
namespace {

constexpr const char* kEvents[] = {"sched_switch", "sched_migrate_task",
                                   "sched_process_fork", "sched_process_exit",
                                   "sched_process_exec"};

// InstanceDir is the instance's directory, for messages (libtracefs returns
// it malloc'ed).
std::string InstanceDir(tracefs_instance* instance) {
  char* dir = tracefs_instance_get_dir(instance);
  if (dir == nullptr) return tracefs_instance_get_name(instance);
  std::string text = dir;
  std::free(dir);
  return text;
}

// WriteInstanceFile writes `value` into the instance's `file`.
absl::Status WriteInstanceFile(tracefs_instance* instance, const char* file,
                               const std::string& value) {
  if (tracefs_instance_file_write(instance, file, value.c_str()) < 0) {
    const int error = errno;
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat("cannot write \"", value, "\" to ",
                                   InstanceDir(instance), "/", file),
                      error);
  }
  return absl::OkStatus();
}

// Configure puts a fresh or reused instance into the state Start promises;
// it returns whether task_newtask is on.
absl::StatusOr<bool> Configure(tracefs_instance* instance,
                               const TracefsSessionOptions& options) {
  if (options.buffer_size_kb <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer size must be positive KiB, got ", options.buffer_size_kb));
  }
  if (options.wake_percent < 0 || options.wake_percent > 100) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wake percent must be 0..100, got ", options.wake_percent));
  }
  tracefs_trace_off(instance);
  // Disabling every event of a reused instance may fail when none was on.
  tracefs_event_disable(instance, nullptr, nullptr);
  RETURN_IF_ERROR(WriteInstanceFile(instance, "trace_clock", "mono"));
  if (tracefs_instance_set_buffer_size(instance, options.buffer_size_kb, -1) <
      0) {
    const int error = errno;
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat("cannot set buffer_size_kb to ", options.buffer_size_kb,
                     " in ", InstanceDir(instance)),
        error);
  }
  RETURN_IF_ERROR(WriteInstanceFile(instance, "buffer_percent",
                                    absl::StrCat(options.wake_percent)));
  // Clearing the buffer drops what a reused instance still held.
  RETURN_IF_ERROR(WriteInstanceFile(instance, "trace", ""));
  for (const char* event : kEvents) {
    if (tracefs_event_enable(instance, "sched", event) < 0) {
      const int error = errno;
      return ErrnoError(absl::StatusCode::kFailedPrecondition,
                        absl::StrCat("cannot enable sched/", event, " in ",
                                     InstanceDir(instance),
                                     " (is the tracepoint in this kernel?)"),
                        error);
    }
  }
  // Optional: without it the tgid of a new thread comes from /proc.
  const bool new_task =
      tracefs_event_enable(instance, "task", "task_newtask") == 0;
  if (tracefs_trace_on(instance) < 0) {
    const int error = errno;
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat("cannot turn tracing on in ", InstanceDir(instance)),
        error);
  }
  return new_task;
}

std::vector<int> CpusWithBuffers(tracefs_instance* instance) {
  std::vector<int> cpus;
  const long possible = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < possible; ++cpu) {
    const std::string dir = absl::StrCat("per_cpu/cpu", cpu);
    if (tracefs_dir_exists(instance, dir.c_str())) cpus.push_back(cpu);
  }
  return cpus;
}

// Remove removes the instance's directory; the handle stays valid.
absl::Status Remove(tracefs_instance* instance) {
  if (tracefs_instance_destroy(instance) < 0) {
    const int error = errno;
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat("cannot remove ", InstanceDir(instance),
                     " (is a reader still holding one of its files open?)"),
        error);
  }
  return absl::OkStatus();
}

// RemoveAndFree removes the instance's directory and frees the handle,
// whether or not the removal worked.
absl::Status RemoveAndFree(tracefs_instance* instance) {
  absl::Status status = Remove(instance);
  tracefs_instance_free(instance);
  return status;
}

// AddIfOurs is the tracefs_instances_walk callback of OurInstanceNames: it
// keeps the names that start with kInstancePrefix and never stops the walk.
int AddIfOurs(const char* name, void* names) {
  if (absl::StartsWith(name, kInstancePrefix)) {
    static_cast<std::vector<std::string>*>(names)->push_back(name);
  }
  return 0;
}

// OurInstanceNames lists the instances named kInstancePrefix... in
// `tracing_dir`/instances. It walks the directory rather than calling
// tracefs_instances(regex), which in libtracefs 1.6.4 never regfree's the
// regex it compiles; the names are collected first so that removing an
// instance cannot disturb the walk.
absl::StatusOr<std::vector<std::string>> OurInstanceNames(
    const std::string& tracing_dir) {
  std::vector<std::string> names;
  if (tracefs_instances_walk(AddIfOurs, &names) < 0) {
    const int error = errno;
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat("cannot list ", tracing_dir, "/instances"),
                      error);
  }
  return names;
}

}  // namespace

absl::StatusOr<std::string> EnsureTracefsMounted() {
  // tracefs_tracing_dir() mounts tracefs at /sys/kernel/tracing when it is
  // missing, and keeps the path it returns. (libtracefs 1.6.4's
  // tracefs_tracing_dir_is_mounted does the same but leaks its path: it
  // strdup's it and documents it as not to be freed.)
  const char* path = tracefs_tracing_dir();
  if (path == nullptr) {
    const int error = errno;
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat("tracefs is not mounted, and mounting it at "
                     "/sys/kernel/tracing failed (euid ",
                     geteuid(),
                     "; mounting needs root, or mount it yourself: mount -t "
                     "tracefs nodev /sys/kernel/tracing)"),
        error);
  }
  return std::string(path);
}

absl::StatusOr<std::unique_ptr<TracefsSession>> TracefsSession::Start(
    const TracefsSessionOptions& options) {
  RETURN_IF_ERROR(EnsureTracefsMounted().status());
  std::string name = absl::StrCat(kInstancePrefix, getpid());
  tracefs_instance* instance = tracefs_instance_create(name.c_str());
  if (instance == nullptr) {
    const int error = errno;
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat("cannot create tracefs instance ", name,
                                   " in ", tracefs_tracing_dir(), "/instances"),
                      error);
  }
  const absl::StatusOr<bool> new_task = Configure(instance, options);
  if (!new_task.ok()) {
    RemoveAndFree(instance).IgnoreError();  // The Configure error says more.
    return new_task.status();
  }
  std::vector<int> cpus = CpusWithBuffers(instance);
  return std::unique_ptr<TracefsSession>(
      new TracefsSession(instance, std::move(name), InstanceDir(instance),
                         std::move(cpus), *new_task));
}

TracefsSession::TracefsSession(tracefs_instance* instance, std::string name,
                               std::string directory, std::vector<int> cpus,
                               bool new_task)
    : name_(std::move(name)),
      directory_(std::move(directory)),
      cpus_(std::move(cpus)),
      new_task_(new_task),
      instance_(instance) {}

TracefsSession::~TracefsSession() { Stop().IgnoreError(); }

tracefs_instance* TracefsSession::instance() {
  absl::MutexLock lock(&mutex_);
  return instance_;
}

absl::Status TracefsSession::TurnOff() {
  absl::MutexLock lock(&mutex_);
  if (instance_ == nullptr) return absl::OkStatus();
  if (tracefs_trace_off(instance_) < 0) {
    const int error = errno;
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat("cannot turn tracing off in ", directory_),
                      error);
  }
  return absl::OkStatus();
}

absl::Status TracefsSession::Stop() {
  absl::MutexLock lock(&mutex_);
  if (instance_ == nullptr) return absl::OkStatus();
  tracefs_trace_off(instance_);
  tracefs_event_disable(instance_, nullptr, nullptr);
  // On failure the handle is kept, so a later Stop (or the destructor)
  // tries again once whatever held the instance open is gone.
  RETURN_IF_ERROR(Remove(instance_));
  tracefs_instance_free(instance_);
  instance_ = nullptr;
  return absl::OkStatus();
}

absl::StatusOr<RingBufferStats> TracefsSession::ReadLostEvents() {
  absl::MutexLock lock(&mutex_);
  if (instance_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("instance ", name_, " is already removed"));
  }
  RingBufferStats total;
  for (const int cpu : cpus_) {
    const std::string path =
        absl::StrCat(directory_, "/per_cpu/cpu", cpu, "/stats");
    // One read(): the kernel builds the text afresh at every read, so a
    // second read at the first one's end returns the tail of a newer,
    // longer text ("66" of "read events: 1066") when a count grew between
    // the two, as libtracefs' read loop does on a busy CPU.
    char text[4096];
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    const ssize_t size = fd < 0 ? -1 : read(fd, text, sizeof(text));
    const int error = errno;
    if (fd >= 0) close(fd);
    if (size < 0)
      return ErrnoError(absl::StatusCode::kFailedPrecondition,
                        absl::StrCat("cannot read ", path), error);
    ASSIGN_OR_RETURN(const RingBufferStats stats,
                     ParseRingBufferStats(
                         absl::string_view(text, static_cast<size_t>(size)),
                         path));
    total += stats;
  }
  return total;
}

absl::StatusOr<int> RemoveStaleInstances() {
  ASSIGN_OR_RETURN(const std::string tracing_dir, EnsureTracefsMounted());
  ASSIGN_OR_RETURN(const std::vector<std::string> names,
                   OurInstanceNames(tracing_dir));
  int removed = 0;
  for (const std::string& name : names) {
    absl::string_view pid_text = name;
    int pid = 0;
    if (!absl::ConsumePrefix(&pid_text, kInstancePrefix) ||
        !absl::SimpleAtoi(pid_text, &pid) || pid <= 0) {
      continue;
    }
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // Alive (or not ours).
    tracefs_instance* instance = tracefs_instance_alloc(nullptr, name.c_str());
    if (instance == nullptr) {
      const int error = errno;
      return ErrnoError(absl::StatusCode::kFailedPrecondition,
                        absl::StrCat("cannot open stale instance ", name),
                        error);
    }
    RETURN_IF_ERROR(RemoveAndFree(instance));
    ++removed;
  }
  return removed;
}

}  // namespace schedcache::host
