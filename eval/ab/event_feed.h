// EventFeed: how RunAb (ab_runner.h) passes an input's events on: to the
// workload's reference engine, to the evaluated session and, once the
// session took them, to the collector; and what it does with the events the
// session refuses. For a recorded input (trace, CSV) a refused event is the
// input's problem, as in `schedcache feed`: it is counted and listed with
// its line among the input's malformed lines (AbInput), and the run goes on.
// For a workload every event is the generator's own, so a refusal is an
// error.
//
// Thread contract: thread-compatible; feed it from one thread. With jobs
// >= 2 an EventFeed runs the session on a thread of its own, joined by
// Finish and the destructor.
#ifndef SCHEDCACHE_EVAL_AB_EVENT_FEED_H_
#define SCHEDCACHE_EVAL_AB_EVENT_FEED_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/ab/ab_collector.h"
#include "eval/ab/ab_result.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/ab_session.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "trace/event_lines.h"

namespace schedcache::ab {

// InputProblems counts an input's malformed lines and refused events, and
// keeps the examples of the kKept earliest for AbInput.
class InputProblems {
 public:
  static constexpr size_t kKept = 5;
  // kUnknownLine orders an example whose line is not known last.
  static constexpr int64_t kUnknownLine = INT64_MAX;

  // Add counts one problem at `line`; `example` is its message, which says
  // where it is ("line 7: ...").
  void Add(int64_t line, std::string example);
  // AddUnlisted counts `n` problems that have no example.
  void AddUnlisted(uint64_t n) { count_ += n; }

  uint64_t count() const { return count_; }
  // Fill sets input.malformed_lines and input.malformed_examples.
  void Fill(AbInput& input) const;

 private:
  uint64_t count_ = 0;
  std::vector<std::pair<int64_t, std::string>> kept_;  // by line, <= kKept
};

// TimeSpan is the span of a stream's timestamps, from its first to its
// latest.
class TimeSpan {
 public:
  void Note(int64_t timestamp_ns);
  // first is the first timestamp noted, or 0 when none was.
  int64_t first() const { return first_ns_.value_or(0); }
  // span is the latest minus the first, saturating at INT64_MAX; 0 when
  // nothing was noted.
  int64_t span() const;

 private:
  std::optional<int64_t> first_ns_;
  int64_t latest_ns_ = INT64_MIN;
};

// SessionFeed gives events to the session and sorts out its answers: the
// back half of an EventFeed, on whichever thread applies the events. An
// event the session took reaches the collector right after, so the
// collector hears the session's observations and the samples in one order.
class SessionFeed {
 public:
  // `problems` (may be null: a workload) receives the refused events.
  // Every reference must outlive the feed.
  SessionFeed(AbCollector& collector, AbSession& session,
              InputProblems* problems);

  // Give offers `event`, from input line `line` (0: none), to the session.
  // Returns OK when the session took it or refused it as the input's
  // problem; otherwise the error that ends the run.
  absl::Status Give(const Event& event, int64_t line);
  // Give of one kind of event, with no Event in between (the feeding
  // thread's own path, jobs 1). Defined in event_feed.cc, for the kinds of
  // Event.
  template <typename Kind>
  absl::Status Give(const Kind& event, int64_t line);

  // Finish: see EventFeed::Finish.
  absl::StatusOr<EngineReport> Finish(AbInput& input);

 private:
  // Offer records one event given to the session and sorts out the
  // session's answer: true when it took the event, false when it refused
  // it as the input's problem, or the error that ends the run.
  absl::StatusOr<bool> Offer(const absl::Status& answer, int64_t line);
  absl::Status AddDeferred(const SessionOutcome& outcome);

  AbCollector& collector_;
  AbSession& session_;
  InputProblems* problems_;
  EventLines lines_;  // line of each event offered, for deferred rejections
  TimeSpan span_;     // of the events the session took
};

// FedEvent is one event on its way to the session, with its input line.
struct FedEvent {
  Event event;
  int64_t line = 0;  // 0: none
};

// EventFeed is the EventSink an input feeds. With jobs 1 every event goes
// through the reference and the session on the feeding thread. With jobs
// >= 2 the session runs on a thread of its own: the feeding thread (the
// input's reader or the generator, and the reference engine, whose
// preferences steer the generator) hands the events over in batches of
// kBatchEvents, kQueuedBatches of them in all, reused: the feeding thread
// is at most that far ahead of the session (back-pressure: memory stays
// bounded, at about 7 MB). The window spans more than a scheduler time
// slice of either thread, so on a busy machine one thread's wait for a
// CPU does not stall the other at once (with 8 batches of 256 events,
// --jobs 2 spent 0.7 s of its 5 s in the kernel waking and waiting). The
// session, and so the collector, sees the same events in the same order
// either way, so the result is the same.
class EventFeed : public EventSink {
 public:
  static constexpr size_t kBatchEvents = 4096;
  static constexpr size_t kQueuedBatches = 16;

  // `reference` (may be null) is the workload's reference engine.
  // `problems` (may be null: a workload) receives the refused events.
  // `jobs` (>= 1) is the number of threads to use; more than 2 gain
  // nothing over 2. Every reference must outlive the feed.
  EventFeed(AbCollector& collector, EventSink* reference, AbSession& session,
            const std::function<void(const AbProgress&)>& progress,
            InputProblems* problems, int jobs);
  // Stops the session's thread, if any, dropping events not yet applied.
  ~EventFeed() override;

  absl::Status OnSample(const Sample& sample) override;
  absl::Status OnHandOver(const HandOver& hand_over) override;
  absl::Status OnProcessExit(const ProcessExit& exit) override;
  absl::Status OnProcessStart(const ProcessStart& start) override;
  absl::Status OnKernelDecision(const KernelDecision& decision) override;
  void OnInputLine(int64_t line) override { line_ = line; }

  // Finish finishes the session and fills `input`'s counts (the samples
  // and hand-overs the session applied), its time span (of the events the
  // session took; saturating at INT64_MAX, as CSV times may span all of
  // int64) and its problems, the session's deferred rejections among them,
  // each named by its line. Returns the session's report, or its error;
  // for a workload a deferred rejection is an InvalidArgument naming the
  // first. Call once, after the last event.
  absl::StatusOr<EngineReport> Finish(AbInput& input);

  // offered is the number of events given to the session.
  uint64_t offered() const { return offered_; }

 private:
  class Pipeline;

  // Pass hands `event` (one of Event's kinds) on to the session: at once,
  // or through the pipeline. Reports progress.
  template <typename Kind>
  absl::Status Pass(const Kind& event);

  EventSink* reference_;
  const std::function<void(const AbProgress&)>& progress_;
  SessionFeed back_;
  std::unique_ptr<Pipeline> pipeline_;  // null: jobs 1
  int64_t line_ = 0;  // input line of the events being fed; 0: none
  uint64_t offered_ = 0;
  TimeSpan offered_span_;  // of the events offered, for progress
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_EVENT_FEED_H_
