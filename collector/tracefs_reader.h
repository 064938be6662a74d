// TracefsReader reads a TracefsSession's per-CPU raw ring buffers
// (per_cpu/cpuN/trace_pipe_raw, whole sub-buffers, never the text pipe)
// through libtracefs and decodes them with RawEventParser. One thread
// serves every CPU: it sleeps in poll() until a CPU's buffer passes the
// session's wake-up watermark, the read period ends, the deadline comes or
// RequestStop is called, then drains every CPU without blocking.
//
// Use:
//   ASSIGN_OR_RETURN(auto session, TracefsSession::Start(options));
//   ASSIGN_OR_RETURN(auto reader, TracefsReader::Open(*session, {}));
//   RETURN_IF_ERROR(reader->Run(deadline, sink));  // until deadline or stop
//   RETURN_IF_ERROR(session->TurnOff());
//   RETURN_IF_ERROR(reader->Drain(sink));          // what is left
//   reader.reset();                                // closes the raw pipes
//   RETURN_IF_ERROR(session->Stop());              // removes the instance
// The reader must be gone before Stop: the kernel refuses to remove an
// instance whose files are open.
//
// Thread contract: RequestStop is safe from any thread and from a signal
// handler (it only write()s an eventfd); the rest is thread-compatible.
#ifndef SCHEDCACHE_COLLECTOR_TRACEFS_READER_H_
#define SCHEDCACHE_COLLECTOR_TRACEFS_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "collector/raw_event_parser.h"
#include "collector/sched_event.h"
#include "collector/tracefs_session.h"
#include "common/clock.h"

struct tracefs_cpu;

namespace schedcache::host {

struct TracefsReaderOptions {
  // The longest a quiet CPU's events wait in the kernel before being read.
  absl::Duration read_period = absl::Milliseconds(100);
  // What Run's deadline is compared with.
  std::shared_ptr<const Clock> clock = Clock::Real();
};

struct ReaderCounters {
  ParseCounts parse;
  std::uint64_t subbuffers = 0;  // sub-buffers read from the kernel
};

// SubbufferTap sees every sub-buffer read, with its CPU, before it is
// parsed (the benchmark records real sub-buffers through it).
using SubbufferTap =
    std::function<void(int cpu, absl::Span<const std::uint8_t> subbuffer)>;

class TracefsReader {
 public:
  // Open loads the event formats of the session's instance and opens each
  // CPU's raw pipe. Returns the error naming the file that failed.
  static absl::StatusOr<std::unique_ptr<TracefsReader>> Open(
      TracefsSession& session, const TracefsReaderOptions& options);
  ~TracefsReader();
  TracefsReader(const TracefsReader&) = delete;
  TracefsReader& operator=(const TracefsReader&) = delete;

  // Run reads and delivers events until `deadline` or RequestStop.
  // Returns the first read error (naming the CPU), else OK.
  absl::Status Run(absl::Time deadline, SchedEventSink& sink);
  // Drain reads what the buffers still hold, without waiting.
  // REQUIRES: the session's tracing is off (TracefsSession::TurnOff).
  absl::Status Drain(SchedEventSink& sink);
  // RequestStop makes Run return soon.
  void RequestStop();

  void set_subbuffer_tap(SubbufferTap tap) { tap_ = std::move(tap); }
  const ReaderCounters& counters() const { return counters_; }

 private:
  struct CpuPipe {
    int cpu = -1;
    int fd = -1;
    tracefs_cpu* reader = nullptr;
  };
  TracefsReader(std::unique_ptr<RawEventParser> parser, int stop_fd,
                int subbuffer_size, const TracefsReaderOptions& options);
  // ReadCpu reads up to `max_subbuffers` sub-buffers from one CPU without
  // blocking.
  absl::Status ReadCpu(const CpuPipe& pipe, int max_subbuffers,
                       SchedEventSink& sink);

  const std::unique_ptr<RawEventParser> parser_;
  const int stop_fd_;
  const absl::Duration read_period_;
  const std::shared_ptr<const Clock> clock_;
  std::vector<std::uint8_t> subbuffer_;
  std::vector<CpuPipe> pipes_;
  // Bounds one CPU's share of a wake-up, so a flooding CPU cannot starve
  // the others: the number of sub-buffers its ring holds.
  int max_subbuffers_per_wake_ = 1;
  SubbufferTap tap_;
  ReaderCounters counters_;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_TRACEFS_READER_H_
