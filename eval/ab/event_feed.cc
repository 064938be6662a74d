#include "eval/ab/event_feed.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

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

EventFeed::EventFeed(AbCollector& collector, EventSink* reference,
                     AbSession& session,
                     const std::function<void(const AbProgress&)>& progress,
                     InputProblems* problems)
    : collector_(collector),
      reference_(reference),
      session_(session),
      progress_(progress),
      problems_(problems) {}

absl::Status EventFeed::OnSample(const Sample& sample) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnSample(sample));
  ASSIGN_OR_RETURN(const bool taken, Offer(session_.OnSample(sample)));
  if (taken) {
    collector_.OnSample(sample);
    Note(sample.timestamp_ns);
  }
  return absl::OkStatus();
}

absl::Status EventFeed::OnHandOver(const HandOver& hand_over) {
  if (reference_ != nullptr) {
    RETURN_IF_ERROR(reference_->OnHandOver(hand_over));
  }
  ASSIGN_OR_RETURN(const bool taken, Offer(session_.OnHandOver(hand_over)));
  if (taken) Note(hand_over.timestamp_ns);
  return absl::OkStatus();
}

absl::Status EventFeed::OnProcessExit(const ProcessExit& exit) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnProcessExit(exit));
  ASSIGN_OR_RETURN(const bool taken, Offer(session_.OnProcessExit(exit)));
  if (taken) Note(exit.timestamp_ns);
  return absl::OkStatus();
}

absl::Status EventFeed::OnProcessStart(const ProcessStart& start) {
  if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnProcessStart(start));
  ASSIGN_OR_RETURN(const bool taken, Offer(session_.OnProcessStart(start)));
  if (taken) Note(start.timestamp_ns);
  return absl::OkStatus();
}

absl::Status EventFeed::OnKernelDecision(const KernelDecision& decision) {
  if (reference_ != nullptr) {
    RETURN_IF_ERROR(reference_->OnKernelDecision(decision));
  }
  ASSIGN_OR_RETURN(const bool taken,
                   Offer(session_.OnKernelDecision(decision)));
  if (taken) Note(decision.timestamp_ns);
  return absl::OkStatus();
}

absl::StatusOr<bool> EventFeed::Offer(const absl::Status& answer) {
  lines_.Add(line_);
  if (progress_ && lines_.size() % kProgressEvery == 0) {
    progress_(AbProgress{static_cast<int64_t>(lines_.size()), Span()});
  }
  if (answer.ok()) return true;
  if (problems_ == nullptr || !absl::IsInvalidArgument(answer)) return answer;
  problems_->Add(line_, absl::StrCat("line ", line_, ": ", answer.message()));
  return false;
}

absl::Status EventFeed::AddDeferred(const SessionOutcome& outcome) {
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

void EventFeed::Note(int64_t timestamp_ns) {
  if (!first_ns_.has_value()) first_ns_ = timestamp_ns;
  latest_ns_ = std::max(latest_ns_, timestamp_ns);
}

int64_t EventFeed::Span() const {
  if (!first_ns_.has_value()) return 0;
  // latest_ns_ >= *first_ns_, so the unsigned difference is exact.
  const uint64_t span =
      static_cast<uint64_t>(latest_ns_) - static_cast<uint64_t>(*first_ns_);
  return span > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX
                                                 : static_cast<int64_t>(span);
}

absl::StatusOr<EngineReport> EventFeed::Finish(AbInput& input) {
  ASSIGN_OR_RETURN(SessionOutcome outcome, session_.Finish());
  RETURN_IF_ERROR(AddDeferred(outcome));
  input.samples = outcome.report.samples_applied;
  input.handovers = outcome.report.handovers_applied;
  input.kernel_decisions = outcome.report.kernel_decisions_applied;
  input.kernel_decisions_unmatched = outcome.report.kernel_decisions_unmatched;
  input.start_ns = first_ns_.value_or(0);
  input.duration_ns = Span();
  if (problems_ != nullptr) problems_->Fill(input);
  return std::move(outcome.report);
}

}  // namespace schedcache::ab
