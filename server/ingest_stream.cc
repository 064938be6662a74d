#include "server/ingest_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

namespace schedcache {

IngestStream::IngestStream(SessionManager& sessions, StreamLimiter& limiter,
                           const Limits& limits, v1::IngestSummary* response)
    : sessions_(sessions),
      limiter_(limiter),
      max_batch_events_(limits.max_batch_events),
      response_(response) {
  if (absl::Status admitted = limiter_.Admit(); !admitted.ok()) {
    FinishWith(admitted);
    return;
  }
  admitted_ = true;
  StartRead(&batch_);
}

void IngestStream::OnReadDone(bool ok) {
  if (!ok) {
    // The client closed its side, or the call was cancelled (then the
    // status is not delivered): answer with the totals.
    FinishWith(absl::OkStatus());
    return;
  }
  if (absl::Status applied = Apply(); !applied.ok()) {
    FinishWith(applied);
    return;
  }
  StartRead(&batch_);
}

absl::Status IngestStream::Apply() {
  ++batches_;
  if (batch_.events_size() > max_batch_events_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "batch ", batches_, " has ", batch_.events_size(),
        " events; the limit is ", max_batch_events_,
        " (flag --max_batch_events)"));
  }
  if (session_ == nullptr) {
    absl::StatusOr<std::shared_ptr<Session>> session =
        sessions_.Find(batch_.session());
    if (!session.ok()) return session.status();
    session_ = *std::move(session);
  } else if (!batch_.session().empty() &&
             batch_.session() != session_->name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch ", batches_, " names session \"", batch_.session(),
        "\" but this stream feeds \"", session_->name(), "\""));
  }
  return session_->ApplyBatch(batch_, tally_);
}

void IngestStream::FinishWith(const absl::Status& status) {
  if (status.ok()) {
    tally_.Fill(*response_);
    response_->set_batches(batches_);
    Finish(grpc::Status::OK);
    return;
  }
  // A failed call carries no response message, so the status says how far
  // the stream got.
  Finish(ToGrpcStatus(absl::Status(
      status.code(),
      absl::StrCat(status.message(), " (this stream: ", tally_.accepted(),
                   " events accepted, ", tally_.rejected(), " rejected)"))));
}

void IngestStream::OnDone() {
  if (admitted_) limiter_.Release();
  delete this;
}

}  // namespace schedcache
