#include "collector/tracefs_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "collector/internal/libtracefs.h"

namespace schedcache::host {
namespace {

// SubbufferSize is the instance's ring-buffer sub-buffer size in bytes:
// buffer_subbuf_size_kb where the kernel has it (6.8+), else one page.
int SubbufferSize(tracefs_instance* instance) {
  long long kb = 0;
  if (tracefs_instance_file_read_number(instance, "buffer_subbuf_size_kb",
                                        &kb) == 0 &&
      kb > 0) {
    return static_cast<int>(kb * 1024);
  }
  return static_cast<int>(sysconf(_SC_PAGESIZE));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TracefsReader>> TracefsReader::Open(
    TracefsSession& session, const TracefsReaderOptions& options) {
  tracefs_instance* instance = session.instance();
  if (instance == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("session ", session.name(), " is already stopped"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<RawEventParser> parser,
                   RawEventParser::Load(session.directory()));
  const int stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd < 0) {
    const int error = errno;
    return absl::ResourceExhaustedError(
        absl::StrCat("eventfd: ", std::strerror(error)));
  }
  const int subbuffer_size = SubbufferSize(instance);
  // From here the reader owns stop_fd and the pipes opened so far, so every
  // error path below releases them through its destructor.
  std::unique_ptr<TracefsReader> reader(new TracefsReader(
      std::move(parser), stop_fd, subbuffer_size, options));
  const ssize_t ring_kb = tracefs_instance_get_buffer_size(instance, 0);
  reader->max_subbuffers_per_wake_ =
      std::max<int>(1, static_cast<int>(ring_kb * 1024 / subbuffer_size));
  for (const int cpu : session.cpus()) {
    const std::string file =
        absl::StrCat("per_cpu/cpu", cpu, "/trace_pipe_raw");
    CpuPipe pipe{.cpu = cpu};
    pipe.fd = tracefs_instance_file_open(instance, file.c_str(),
                                         O_RDONLY | O_NONBLOCK);
    if (pipe.fd >= 0) {
      pipe.reader = tracefs_cpu_alloc_fd(pipe.fd, subbuffer_size, true);
    }
    if (pipe.reader == nullptr) {
      const int error = errno;
      if (pipe.fd >= 0) close(pipe.fd);
      return absl::FailedPreconditionError(
          absl::StrCat("cannot open ", session.directory(), "/", file, ": ",
                       std::strerror(error)));
    }
    reader->pipes_.push_back(pipe);
  }
  return reader;
}

TracefsReader::TracefsReader(std::unique_ptr<RawEventParser> parser,
                             int stop_fd, int subbuffer_size,
                             const TracefsReaderOptions& options)
    : parser_(std::move(parser)),
      stop_fd_(stop_fd),
      read_period_(options.read_period),
      clock_(options.clock),
      subbuffer_(static_cast<std::size_t>(subbuffer_size)) {}

TracefsReader::~TracefsReader() {
  for (const CpuPipe& pipe : pipes_) {
    tracefs_cpu_free_fd(pipe.reader);  // Leaves the fd to us.
    close(pipe.fd);
  }
  close(stop_fd_);
}

void TracefsReader::RequestStop() {
  const std::uint64_t one = 1;
  // A failed write can only mean the counter is saturated, i.e. a stop is
  // already pending.
  [[maybe_unused]] const ssize_t written = write(stop_fd_, &one, sizeof(one));
}

absl::Status TracefsReader::ReadCpu(const CpuPipe& pipe, int max_subbuffers,
                                    SchedEventSink& sink) {
  for (int i = 0; i < max_subbuffers; ++i) {
    const int got = tracefs_cpu_read(pipe.reader, subbuffer_.data(), true);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return absl::OkStatus();
    if (got < 0) {
      const int error = errno;
      return absl::DataLossError(
          absl::StrCat("reading the raw ring buffer of CPU ", pipe.cpu,
                       " failed: ", std::strerror(error)));
    }
    if (got == 0) return absl::OkStatus();
    const absl::Span<const std::uint8_t> subbuffer(
        subbuffer_.data(), static_cast<std::size_t>(got));
    if (tap_) tap_(pipe.cpu, subbuffer);
    ++counters_.subbuffers;
    counters_.parse += parser_->ParseSubbuffer(subbuffer, pipe.cpu, sink);
  }
  return absl::OkStatus();
}

absl::Status TracefsReader::Run(absl::Time deadline, SchedEventSink& sink) {
  std::vector<pollfd> waits;
  for (const CpuPipe& pipe : pipes_) waits.push_back({pipe.fd, POLLIN, 0});
  waits.push_back({stop_fd_, POLLIN, 0});
  while (true) {
    const absl::Duration left = deadline - clock_->Now();
    if (left <= absl::ZeroDuration()) return absl::OkStatus();
    const int timeout_ms = static_cast<int>(
        absl::ToInt64Milliseconds(std::min(left, read_period_)) + 1);
    if (poll(waits.data(), waits.size(), timeout_ms) < 0 && errno != EINTR) {
      const int error = errno;
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(error)));
    }
    for (const CpuPipe& pipe : pipes_) {
      RETURN_IF_ERROR(ReadCpu(pipe, max_subbuffers_per_wake_, sink));
    }
    if (waits.back().revents & POLLIN) return absl::OkStatus();
  }
}

absl::Status TracefsReader::Drain(SchedEventSink& sink) {
  // Tracing is off, so each buffer only shrinks and reading it until it is
  // empty ends.
  for (const CpuPipe& pipe : pipes_) {
    RETURN_IF_ERROR(ReadCpu(pipe, std::numeric_limits<int>::max(), sink));
  }
  return absl::OkStatus();
}

}  // namespace schedcache::host
