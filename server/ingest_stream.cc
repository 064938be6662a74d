#include "server/ingest_stream.h"

#include <utility>

#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "server/proto_convert.h"

namespace schedcache {

IngestStream::IngestStream(SessionManager& sessions, StreamLimiter& limiter,
                           const Limits& limits, grpc::ByteBuffer* response)
    : sessions_(sessions),
      limiter_(limiter),
      max_batch_events_(limits.max_batch_events),
      response_(response) {
  if (absl::Status admitted = limiter_.Admit(); !admitted.ok()) {
    FinishWith(admitted);
    return;
  }
  admitted_ = true;
  StartRead(&read_);
}

void IngestStream::OnReadDone(bool ok) {
  if (!ok) {
    // The client closed its side, or the call was cancelled (then the
    // status is not delivered): answer with the totals.
    FinishWith(absl::OkStatus());
    return;
  }
  ++batches_;
  absl::Status applied = Parse();
  if (applied.ok()) applied = Apply();
  if (!applied.ok()) {
    FinishWith(applied);
    return;
  }
  StartRead(&read_);
}

absl::Status IngestStream::Parse() {
  // Clear() would free the columns message (proto3 frees message fields
  // on Clear); clearing field by field keeps the columns' storage and the
  // Event objects for the parse to reuse. The columns message then stays
  // present while empty, which is why batches are read by their sizes,
  // never by has_columns().
  batch_.clear_session();
  batch_.mutable_events()->Clear();
  v1::EventColumns& columns = *batch_.mutable_columns();
  columns.clear_timestamp_delta_ns();
  columns.clear_cpu();
  columns.clear_tgid();
  columns.clear_tid();
  columns.clear_delta_ns();
  columns.clear_kind();
  columns.mutable_attributes()->Clear();  // repeated fields only: kept
  // Fields this server does not know (from a newer client) are kept as
  // unknown fields, which a merge appends to: drop them per batch, or a
  // long stream would grow without bound.
  batch_.GetReflection()->MutableUnknownFields(&batch_)->Clear();
  columns.GetReflection()->MutableUnknownFields(&columns)->Clear();
  grpc::ProtoBufferReader reader(&read_);
  const bool parsed = batch_.MergeFromBoundedZeroCopyStream(
      &reader, static_cast<int>(read_.Length()));
  read_.Clear();
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch ", batches_, " is not a valid schedcache.v1.IngestBatch"));
  }
  return absl::OkStatus();
}

absl::Status IngestStream::Apply() {
  const int events = BatchEventCount(batch_);
  if (events > max_batch_events_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "batch ", batches_, " has ", events, " events; the limit is ",
        max_batch_events_, " (flag --max_batch_events)"));
  }
  if (absl::Status form = CheckBatchForm(batch_); !form.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batches_, " ", form.message()));
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
    v1::IngestSummary summary;
    tally_.Fill(summary);
    summary.set_batches(batches_);
    bool own_buffer = false;
    const grpc::Status serialized =
        grpc::SerializationTraits<v1::IngestSummary>::Serialize(
            summary, response_, &own_buffer);
    Finish(serialized);
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
