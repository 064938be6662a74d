// EventFeed: how RunAb (ab_runner.h) passes an input's events on: to the
// workload's reference engine, to the evaluated session and, once the
// session took them, to the collector; and what it does with the events the
// session refuses. For a recorded input (trace, CSV) a refused event is the
// input's problem, as in `schedcache feed`: it is counted and listed with
// its line among the input's malformed lines (AbInput), and the run goes on.
// For a workload every event is the generator's own, so a refusal is an
// error.
//
// Thread contract: thread-compatible; feed it from one thread.
#ifndef SCHEDCACHE_EVAL_AB_EVENT_FEED_H_
#define SCHEDCACHE_EVAL_AB_EVENT_FEED_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/ab/ab_collector.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/ab_session.h"
#include "eval/report/ab_result.h"
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

class EventFeed : public EventSink {
 public:
  // `reference` (may be null) is the workload's reference engine.
  // `problems` (may be null: a workload) receives the refused events.
  // Every reference must outlive the feed.
  EventFeed(AbCollector& collector, EventSink* reference, AbSession& session,
            const std::function<void(const AbProgress&)>& progress,
            InputProblems* problems);

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
  // first.
  absl::StatusOr<EngineReport> Finish(AbInput& input);

  // offered is the number of events given to the session.
  uint64_t offered() const { return lines_.size(); }

 private:
  // Offer records one event given to the session and sorts out the
  // session's answer: true when it took the event, false when it refused
  // it as the input's problem, or the error that ends the run.
  absl::StatusOr<bool> Offer(const absl::Status& answer);
  absl::Status AddDeferred(const SessionOutcome& outcome);
  void Note(int64_t timestamp_ns);
  int64_t Span() const;

  AbCollector& collector_;
  EventSink* reference_;
  AbSession& session_;
  const std::function<void(const AbProgress&)>& progress_;
  InputProblems* problems_;
  int64_t line_ = 0;  // input line of the events being fed; 0: none
  EventLines lines_;  // line of each event offered, for deferred rejections
  std::optional<int64_t> first_ns_;
  int64_t latest_ns_ = INT64_MIN;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_EVENT_FEED_H_
