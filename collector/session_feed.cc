#include "collector/session_feed.h"

#include <utility>

namespace schedcache::host {

SessionFeed::SessionFeed(client::IngestWriter* writer, ProcessFilter filter,
                         ProcAttributes& attributes)
    : writer_(writer), filter_(std::move(filter)), attributes_(attributes) {}

bool SessionFeed::Matches(int32_t tgid, int64_t now_ns) {
  if (filter_.empty()) return true;
  if (tgid <= 0) return false;
  if (filter_.tgids.contains(tgid)) return true;
  if (filter_.comm.empty()) return false;
  const ProcessAttributes* process = attributes_.Lookup(tgid, now_ns);
  return process != nullptr && process->comm == filter_.comm;
}

absl::Status SessionFeed::OnSample(const Sample& sample) {
  if (!Matches(sample.tgid, sample.timestamp_ns)) return absl::OkStatus();
  ++samples_sent_;
  return writer_ != nullptr ? writer_->Add(sample) : absl::OkStatus();
}

absl::Status SessionFeed::OnHandOver(const HandOver& hand_over) {
  HandOver sent = hand_over;
  if (hand_over.tgid != 0 && !Matches(hand_over.tgid, hand_over.timestamp_ns)) {
    sent.tgid = 0;
    sent.tid = 0;
  }
  ++hand_overs_sent_;
  return writer_ != nullptr ? writer_->Add(sent) : absl::OkStatus();
}

absl::Status SessionFeed::OnKernelDecision(const KernelDecision& decision) {
  if (!Matches(decision.tgid, decision.timestamp_ns)) return absl::OkStatus();
  ++kernel_decisions_sent_;
  return writer_ != nullptr ? writer_->Add(decision) : absl::OkStatus();
}

absl::Status SessionFeed::OnProcessStart(const ProcessStart& start) {
  return writer_ != nullptr ? writer_->Add(start) : absl::OkStatus();
}

absl::Status SessionFeed::OnProcessExit(const ProcessExit& exit) {
  ++exits_sent_;
  return writer_ != nullptr ? writer_->Add(exit) : absl::OkStatus();
}

}  // namespace schedcache::host
