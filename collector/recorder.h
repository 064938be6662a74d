// Recorder runs one live capture (`schedcache record`): a private tracefs
// instance (TracefsSession), its raw ring buffers read by TracefsReader,
// and LiveConverter turning the records into the model's events for a sink
// and, optionally, ftrace text. The instance is removed on every way out:
// the end of the duration, RequestStop (SIGINT, SIGTERM) and errors.
//
// With kernel_decisions, the running kernel's own cache-aware decisions
// (collector/kernel_decision_source.h) join the capture: read on every round,
// merged in time by the converter, and the kernel's clock measured once
// before the capture and written as the text's first line.
//
// Losses are never silent: ring-buffer overruns (the per-CPU stats files),
// records the parser could not decode and records that came too late are
// counted, handed to a LossListener as increments while the capture runs,
// and returned in the result.
//
// Thread contract: RequestStop is async-signal-safe and may be called from
// any thread; the rest runs on one thread.
#ifndef SCHEDCACHE_COLLECTOR_RECORDER_H_
#define SCHEDCACHE_COLLECTOR_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/model_defaults.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "collector/kernel_decision_source.h"
#include "collector/live_converter.h"
#include "collector/tracefs_reader.h"
#include "collector/tracefs_session.h"
#include "trace/ftrace_writer.h"

namespace schedcache::host {

struct RecordOptions {
  absl::Duration duration = absl::Seconds(10);
  int hz = kDefaultHz;  // tick rate of the samples
  int buffer_size_kb = 4096;
  absl::Duration read_period = absl::Milliseconds(100);
  bool kernel_decisions = false;  // also the kernel's task_cache_work results
  // What the duration and the progress's elapsed time are read from.
  std::shared_ptr<const Clock> clock = Clock::Real();
};

// LossCounts: records lost on the way, by cause.
struct LossCounts {
  uint64_t ring_buffer_lost = 0;  // overrun + commit overrun + dropped
  uint64_t unparsed = 0;          // undecodable, unknown type, bad sub-buffer
  uint64_t late = 0;              // after later records were converted
  // Kernel decisions and ticks the BPF ring buffers had no room for.
  uint64_t decisions_lost = 0;
  uint64_t total() const {
    return ring_buffer_lost + unparsed + late + decisions_lost;
  }
};

// RecordProgress is what the capture has done so far.
struct RecordProgress {
  absl::Duration elapsed;
  uint64_t records = 0;  // decoded records
  uint64_t samples = 0;
  uint64_t hand_overs = 0;
  uint64_t kernel_decisions = 0;  // converted (RecordOptions)
  uint64_t kernel_ticks = 0;      // converted sched_tick records
  // The kernel's clock, when kernel decisions are recorded.
  std::optional<KernelClock> kernel_clock;
  LossCounts losses;
  // With a trace: processes whose cgroup path the text carries, and those
  // whose path could not be read (LiveConverter).
  uint64_t cgroup_paths = 0;
  uint64_t cgroup_unread = 0;
  // runtime_ns[cpu]: the runtime the samples carry on each CPU.
  std::vector<int64_t> runtime_ns;
};

// LossListener hears loss increments since its previous call.
using LossListener = std::function<void(const LossCounts& increment)>;
// ProgressListener hears the progress after each read round.
using ProgressListener = std::function<void(const RecordProgress& progress)>;

class Recorder {
 public:
  // Start creates the tracefs instance and opens its buffers, and with
  // kernel_decisions first loads the BPF programs. Returns
  // FailedPrecondition saying what is missing (tracefs, root, an event;
  // KernelDecisionSource::Open's reasons).
  static absl::StatusOr<std::unique_ptr<Recorder>> Start(
      const RecordOptions& options);
  ~Recorder();  // removes the instance if Run did not
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Run captures until the duration ends or RequestStop, then drains the
  // buffers, ends the conversion, removes the instance and returns the
  // final progress. `sink` gets the model's events; `trace` (may be null)
  // the text. Call once.
  absl::StatusOr<RecordProgress> Run(EventSink& sink, FtraceWriter* trace,
                                     const LossListener& on_loss,
                                     const ProgressListener& on_progress);

  // RequestStop makes Run finish within one read period
  // (async-signal-safe: it sets an atomic flag).
  void RequestStop();

  // exact_tgids says whether new tasks' processes come from the trace
  // (task:task_newtask); false on a kernel without it, where every thread
  // is asked of /proc and one that exits first is filed as its own process.
  bool exact_tgids() const { return session_->new_task_enabled(); }

 private:
  Recorder(RecordOptions options, std::unique_ptr<TracefsSession> session,
           std::unique_ptr<TracefsReader> reader,
           std::unique_ptr<KernelDecisionSource> decisions);
  // ReadDecisions hands the decisions and ticks the kernel has committed to
  // the converter (none without kernel_decisions).
  absl::Status ReadDecisions(LiveConverter& converter);
  absl::Status Capture(LiveConverter& converter, const LossListener& on_loss,
                       const ProgressListener& on_progress);
  // Losses returns the losses so far; ring buffer stats from the kernel.
  absl::StatusOr<LossCounts> Losses(const LiveConverter& converter);
  RecordProgress Progress(const LiveConverter& converter,
                          const LossCounts& losses) const;
  absl::Status ReportLosses(const LiveConverter& converter,
                            const LossListener& on_loss);

  const RecordOptions options_;
  const absl::Time started_;
  // Declared first, destroyed last: the kernel refuses to remove an
  // instance whose raw pipes the reader still holds open.
  std::unique_ptr<TracefsSession> session_;
  std::unique_ptr<TracefsReader> reader_;
  std::unique_ptr<KernelDecisionSource> decisions_;  // null: not recorded
  std::optional<KernelClock> kernel_clock_;
  std::atomic<bool> stop_requested_{false};
  LossCounts reported_;  // what on_loss has heard so far
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_RECORDER_H_
