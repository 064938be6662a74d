#include "eval/ab/event_feed.h"

#include <algorithm>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "eval/ab/batch_queue.h"

namespace schedcache::ab {
namespace {

constexpr uint64_t kProgressEvery = 1 << 16;

}  // namespace

void InputProblems::Add(int64_t line, std::string example) {
  ++count_;
  const auto at = std::upper_bound(
      kept_.begin(), kept_.end(), line,
      [](int64_t l, const std::pair<int64_t, std::string>& kept) {
        return l < kept.first;
      });
  if (at == kept_.end() && kept_.size() == kKept) return;
  kept_.emplace(at, line, std::move(example));
  if (kept_.size() > kKept) kept_.pop_back();
}

void InputProblems::Fill(AbInput& input) const {
  input.malformed_lines = count_;
  input.malformed_examples.clear();
  for (const auto& [line, example] : kept_) {
    input.malformed_examples.push_back(example);
  }
}

void TimeSpan::Note(int64_t timestamp_ns) {
  if (!first_ns_.has_value()) first_ns_ = timestamp_ns;
  latest_ns_ = std::max(latest_ns_, timestamp_ns);
}

int64_t TimeSpan::span() const {
  if (!first_ns_.has_value()) return 0;
  // latest_ns_ >= *first_ns_, so the unsigned difference is exact.
  const uint64_t span =
      static_cast<uint64_t>(latest_ns_) - static_cast<uint64_t>(*first_ns_);
  return span > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX
                                                 : static_cast<int64_t>(span);
}

SessionFeed::SessionFeed(AbCollector& collector, AbSession& session,
                         InputProblems* problems)
    : collector_(collector), session_(session), problems_(problems) {}

template <typename Kind>
absl::Status SessionFeed::Give(const Kind& event, int64_t line) {
  absl::Status answer;
  if constexpr (std::is_same_v<Kind, Sample>) {
    answer = session_.OnSample(event);
  } else if constexpr (std::is_same_v<Kind, HandOver>) {
    answer = session_.OnHandOver(event);
  } else if constexpr (std::is_same_v<Kind, ProcessExit>) {
    answer = session_.OnProcessExit(event);
  } else if constexpr (std::is_same_v<Kind, ProcessStart>) {
    answer = session_.OnProcessStart(event);
  } else {
    static_assert(std::is_same_v<Kind, KernelDecision>);
    answer = session_.OnKernelDecision(event);
  }
  ASSIGN_OR_RETURN(const bool taken, Offer(answer, line));
  if (taken) {
    if constexpr (std::is_same_v<Kind, Sample>) collector_.OnSample(event);
    span_.Note(event.timestamp_ns);
  }
  return absl::OkStatus();
}

absl::Status SessionFeed::Give(const Event& event, int64_t line) {
  return std::visit([&](const auto& e) { return Give(e, line); }, event);
}

absl::StatusOr<bool> SessionFeed::Offer(const absl::Status& answer,
                                        int64_t line) {
  lines_.Add(line);
  if (answer.ok()) return true;
  if (problems_ == nullptr || !absl::IsInvalidArgument(answer)) return answer;
  problems_->Add(line, absl::StrCat("line ", line, ": ", answer.message()));
  return false;
}

absl::Status SessionFeed::AddDeferred(const SessionOutcome& outcome) {
  if (outcome.deferred_rejections == 0) return absl::OkStatus();
  if (problems_ == nullptr) {
    const DeferredRejection& first = outcome.first_deferred.front();
    return absl::InvalidArgumentError(absl::StrCat(
        "the session rejected ", outcome.deferred_rejections,
        " events; the first, event ", first.index, ": ", first.reason));
  }
  for (const DeferredRejection& rejection : outcome.first_deferred) {
    const std::optional<int64_t> line = lines_.LineOf(rejection.index);
    problems_->Add(line.value_or(InputProblems::kUnknownLine),
                   line.has_value()
                       ? absl::StrCat("line ", *line, ": ", rejection.reason)
                       : absl::StrCat("event ", rejection.index,
                                      " of the stream: ", rejection.reason));
  }
  problems_->AddUnlisted(outcome.deferred_rejections -
                         outcome.first_deferred.size());
  return absl::OkStatus();
}

absl::StatusOr<EngineReport> SessionFeed::Finish(AbInput& input) {
  ASSIGN_OR_RETURN(SessionOutcome outcome, session_.Finish());
  RETURN_IF_ERROR(AddDeferred(outcome));
  input.samples = outcome.report.samples_applied;
  input.handovers = outcome.report.handovers_applied;
  input.kernel_decisions = outcome.report.kernel_decisions_applied;
  input.kernel_decisions_unmatched = outcome.report.kernel_decisions_unmatched;
  input.start_ns = span_.first();
  input.duration_ns = span_.span();
  if (problems_ != nullptr) problems_->Fill(input);
  return std::move(outcome.report);
}

// EventFeed::Pipeline is the session's thread and the kQueuedBatches
// batches that circulate between the two threads: the feeding thread fills
// a free batch and queues it in `full_`; the session's thread applies it,
// empties it and gives it back through `free_`. With every batch in flight
// the feeding thread waits for one to come back (back-pressure), and a
// batch's memory is reused while the caches still hold it. The first error
// ends the session's thread and cancels both queues, so the feeding thread
// stops at its next batch.
class EventFeed::Pipeline {
 public:
  explicit Pipeline(SessionFeed& back)
      : full_(kQueuedBatches),
        free_(kQueuedBatches),
        thread_([this, &back] { Apply(back); }) {
    for (size_t i = 1; i < kQueuedBatches; ++i) {
      std::vector<FedEvent> batch;
      batch.reserve(kBatchEvents);
      free_.Push(std::move(batch));
    }
    batch_.reserve(kBatchEvents);
  }
  ~Pipeline() {
    if (thread_.joinable()) {
      full_.Cancel();
      free_.Cancel();
      thread_.join();
    }
  }

  // Add queues one event; a full batch goes to the session's thread.
  // Returns the session's error once it stopped.
  template <typename Kind>
  absl::Status Add(const Kind& event, int64_t line) {
    batch_.push_back(FedEvent{event, line});
    if (batch_.size() < kBatchEvents) return absl::OkStatus();
    return Send();
  }

  // Drain sends what is left, waits for the session's thread to apply it
  // and returns the thread's error, if any. Call once.
  absl::Status Drain() {
    if (!batch_.empty()) {
      const absl::Status sent = Send();
      if (!sent.ok()) return sent;  // the thread stopped and was joined
    }
    full_.Close();
    thread_.join();
    return status_;
  }

 private:
  // Send queues batch_ and takes a free batch in its place.
  absl::Status Send() {
    if (full_.Push(std::move(batch_))) {
      std::optional<std::vector<FedEvent>> next = free_.Pop();
      if (next.has_value()) {
        batch_ = *std::move(next);
        return absl::OkStatus();
      }
    }
    batch_.clear();  // moved from
    thread_.join();  // cancelled: the thread stopped on an error
    return status_;
  }

  void Apply(SessionFeed& back) {
    while (std::optional<std::vector<FedEvent>> batch = full_.Pop()) {
      for (const FedEvent& fed : *batch) {
        status_ = back.Give(fed.event, fed.line);
        if (!status_.ok()) {
          full_.Cancel();
          free_.Cancel();
          return;
        }
      }
      batch->clear();
      free_.Push(*std::move(batch));
    }
  }

  BatchQueue<std::vector<FedEvent>> full_;  // to the session's thread
  BatchQueue<std::vector<FedEvent>> free_;  // back, emptied
  std::vector<FedEvent> batch_;  // being filled, on the feeding thread
  // Written by thread_ only; read after joining it.
  absl::Status status_;
  std::thread thread_;  // last: starts once the members above exist
};

EventFeed::EventFeed(AbCollector& collector, EventSink* reference,
                     AbSession& session,
                     const std::function<void(const AbProgress&)>& progress,
                     InputProblems* problems, int jobs)
    : reference_(reference),
      progress_(progress),
      back_(collector, session, problems),
      pipeline_(jobs >= 2 ? std::make_unique<Pipeline>(back_) : nullptr) {}

EventFeed::~EventFeed() = default;

absl::Status EventFeed::OnSample(const Sample& sample) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnSample(sample));
  return Pass(sample);
}

absl::Status EventFeed::OnHandOver(const HandOver& hand_over) {
  if (reference_ != nullptr) {
    RETURN_IF_ERROR(reference_->OnHandOver(hand_over));
  }
  return Pass(hand_over);
}

absl::Status EventFeed::OnProcessExit(const ProcessExit& exit) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnProcessExit(exit));
  return Pass(exit);
}

absl::Status EventFeed::OnProcessStart(const ProcessStart& start) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnProcessStart(start));
  return Pass(start);
}

absl::Status EventFeed::OnKernelDecision(const KernelDecision& decision) {
  if (reference_ != nullptr) {
    RETURN_IF_ERROR(reference_->OnKernelDecision(decision));
  }
  return Pass(decision);
}

template <typename Kind>
absl::Status EventFeed::Pass(const Kind& event) {
  ++offered_;
  offered_span_.Note(event.timestamp_ns);
  if (progress_ && offered_ % kProgressEvery == 0) {
    progress_(AbProgress{static_cast<int64_t>(offered_),
                         offered_span_.span()});
  }
  if (pipeline_ != nullptr) return pipeline_->Add(event, line_);
  return back_.Give(event, line_);
}

absl::StatusOr<EngineReport> EventFeed::Finish(AbInput& input) {
  if (pipeline_ != nullptr) {
    const absl::Status applied = pipeline_->Drain();
    pipeline_.reset();
    RETURN_IF_ERROR(applied);
  }
  return back_.Finish(input);
}

}  // namespace schedcache::ab
