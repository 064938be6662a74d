#include "collector/recorder.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "common/status_macros.h"

namespace schedcache::host {
namespace {

uint64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(now.tv_nsec);
}

// kHorizonMarginNs keeps records of the last microseconds before a read
// round for the next one: a writer stamps its record when it reserves the
// slot and may commit it just after the reader passed.
constexpr uint64_t kHorizonMarginNs = 1'000'000;

LossCounts Minus(const LossCounts& a, const LossCounts& b) {
  return LossCounts{a.ring_buffer_lost - b.ring_buffer_lost,
                    a.unparsed - b.unparsed, a.late - b.late,
                    a.decisions_lost - b.decisions_lost};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Recorder>> Recorder::Start(
    const RecordOptions& options) {
  // First: a kernel without SCHED_CACHE is refused before tracefs changes.
  std::unique_ptr<KernelDecisionSource> decisions;
  if (options.kernel_decisions) {
    ASSIGN_OR_RETURN(decisions, KernelDecisionSource::Open());
  }
  TracefsSessionOptions session_options;
  session_options.buffer_size_kb = options.buffer_size_kb;
  ASSIGN_OR_RETURN(std::unique_ptr<TracefsSession> session,
                   TracefsSession::Start(session_options));
  TracefsReaderOptions reader_options;
  reader_options.read_period = options.read_period;
  reader_options.clock = options.clock;
  ASSIGN_OR_RETURN(std::unique_ptr<TracefsReader> reader,
                   TracefsReader::Open(*session, reader_options));
  return std::unique_ptr<Recorder>(new Recorder(
      options, std::move(session), std::move(reader), std::move(decisions)));
}

Recorder::Recorder(RecordOptions options,
                   std::unique_ptr<TracefsSession> session,
                   std::unique_ptr<TracefsReader> reader,
                   std::unique_ptr<KernelDecisionSource> decisions)
    : options_(std::move(options)),
      started_(options_.clock->Now()),
      session_(std::move(session)),
      reader_(std::move(reader)),
      decisions_(std::move(decisions)) {}

Recorder::~Recorder() {
  reader_.reset();
  session_->Stop().IgnoreError();  // the destructor of session_ retries
}

void Recorder::RequestStop() {
  // Only the flag: the reader may be gone already, and the capture loop
  // looks at the flag after every read round (at most read_period).
  stop_requested_.store(true, std::memory_order_relaxed);
}

absl::StatusOr<RecordProgress> Recorder::Run(
    EventSink& sink, FtraceWriter* trace, const LossListener& on_loss,
    const ProgressListener& on_progress) {
  LiveConverter converter(options_.hz, sink, trace);
  absl::Status captured = absl::OkStatus();
  if (decisions_ != nullptr) {
    // The clock goes at the top of the text (docs/LIVE.md).
    absl::StatusOr<KernelClock> clock = decisions_->ReadClock();
    if (clock.ok()) {
      kernel_clock_ = *clock;
      if (trace != nullptr) trace->Write(FormatKernelClockLine(*clock));
    } else {
      captured = clock.status();
    }
  }
  if (captured.ok()) captured = Capture(converter, on_loss, on_progress);
  // Whatever happened, the instance goes: first the reader's open pipes.
  reader_.reset();
  const absl::Status stopped = session_->Stop();
  RETURN_IF_ERROR(captured);
  RETURN_IF_ERROR(stopped);
  const LossCounts losses = reported_;
  return Progress(converter, losses);
}

absl::Status Recorder::Capture(LiveConverter& converter,
                               const LossListener& on_loss,
                               const ProgressListener& on_progress) {
  const Clock& clock = *options_.clock;
  const absl::Time deadline = clock.Now() + options_.duration;
  while (!stop_requested_.load(std::memory_order_relaxed) &&
         clock.Now() < deadline) {
    // Every CPU is read at least once after this time, so records before
    // it are all in.
    const uint64_t horizon = MonotonicNs() - kHorizonMarginNs;
    RETURN_IF_ERROR(reader_->Run(
        std::min(deadline, clock.Now() + options_.read_period), converter));
    RETURN_IF_ERROR(ReadDecisions(converter));
    RETURN_IF_ERROR(converter.Release(horizon));
    RETURN_IF_ERROR(ReportLosses(converter, on_loss));
    if (on_progress) on_progress(Progress(converter, reported_));
  }
  RETURN_IF_ERROR(session_->TurnOff());
  RETURN_IF_ERROR(reader_->Drain(converter));
  RETURN_IF_ERROR(ReadDecisions(converter));
  RETURN_IF_ERROR(converter.Finish());
  return ReportLosses(converter, on_loss);
}

absl::Status Recorder::ReadDecisions(LiveConverter& converter) {
  if (decisions_ == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(const KernelRecords records, decisions_->Consume());
  for (const KernelDecision& decision : records.decisions) {
    converter.OnDecision(decision);
  }
  for (const KernelTick& tick : records.ticks) converter.OnTick(tick);
  return absl::OkStatus();
}

absl::Status Recorder::ReportLosses(const LiveConverter& converter,
                                    const LossListener& on_loss) {
  ASSIGN_OR_RETURN(const RingBufferStats ring, session_->ReadLostEvents());
  const ParseCounts& parse = reader_->counters().parse;
  LossCounts now{
      ring.lost(), parse.unparsed + parse.unknown_type + parse.bad_subbuffers,
      converter.late()};
  if (decisions_ != nullptr) {
    ASSIGN_OR_RETURN(const KernelDecisionTotals totals, decisions_->Totals());
    now.decisions_lost = totals.lost;
  }
  const LossCounts increment = Minus(now, reported_);
  reported_ = now;
  if (increment.total() > 0 && on_loss) on_loss(increment);
  return absl::OkStatus();
}

RecordProgress Recorder::Progress(const LiveConverter& converter,
                                  const LossCounts& losses) const {
  RecordProgress progress;
  progress.elapsed = options_.clock->Now() - started_;
  progress.records = converter.converted() + converter.late();
  progress.samples = static_cast<uint64_t>(converter.counters().samples);
  progress.hand_overs = static_cast<uint64_t>(converter.counters().hand_overs);
  progress.kernel_decisions = converter.decisions();
  progress.kernel_ticks = converter.ticks();
  progress.kernel_clock = kernel_clock_;
  progress.losses = losses;
  progress.cgroup_paths = converter.cgroup_paths();
  progress.cgroup_unread = converter.cgroup_unread();
  progress.runtime_ns = converter.runtime_ns();
  return progress;
}

}  // namespace schedcache::host
