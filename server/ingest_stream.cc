#include "server/ingest_stream.h"

#include <string>
#include <type_traits>
#include <utility>

#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "api/proto_convert.h"
#include "common/grpc_status.h"
#include "common/message_text.h"
#include "common/service_defaults.h"
#include "common/status_macros.h"

namespace schedcache {

void IngestTally::Reject(uint64_t offset, const absl::Status& reason) {
  if (first_rejections_.size() < kMaxReasons) {
    v1::Rejection& rejection = first_rejections_.emplace_back();
    rejection.set_index(batch_start_ + offset);
    rejection.set_reason(std::string(reason.message()));
  }
  ++rejected_;
  ++batch_rejected_;
}

void IngestTally::EndBatch(uint64_t events) {
  accepted_ += events - batch_rejected_;
  batch_start_ += events;
  batch_rejected_ = 0;
}

void IngestTally::Fill(v1::IngestSummary& summary) const {
  summary.set_accepted(accepted_);
  summary.set_rejected(rejected_);
  summary.clear_first_rejections();
  for (const v1::Rejection& rejection : first_rejections_) {
    *summary.add_first_rejections() = rejection;
  }
}

void StreamComms::FillFirst(Sample& sample) {
  DoneSlot(sample.tgid) = Done{sample.tgid, batch_};
  if (!sample.comm.empty()) {
    if (static_cast<int64_t>(by_tgid_.size()) >= capacity_ &&
        !by_tgid_.contains(sample.tgid)) {
      by_tgid_.clear();
    }
    by_tgid_.insert_or_assign(sample.tgid, Known{sample.comm, batch_});
    return;
  }
  const auto known = by_tgid_.find(sample.tgid);
  if (known == by_tgid_.end() || known->second.batch == batch_) return;
  sample.comm = known->second.comm;
  known->second.batch = batch_;
}

void StreamComms::Forget(int32_t tgid) {
  by_tgid_.erase(tgid);
  // A new process with the tgid may be named later in this batch.
  Done& done = DoneSlot(tgid);
  if (done.tgid == tgid) done = Done{};
}

void DecodedBatch::Decode(const v1::IngestBatch& batch, StreamComms& comms) {
  events_.clear();
  unreadable_.clear();
  comms.StartBatch();
  uint64_t position = 0;
  ForEachBatchEvent(batch, [this, &comms, &position](const auto& event) {
    using Kind = std::decay_t<decltype(event)>;
    if constexpr (std::is_same_v<Kind, UnreadableRow>) {
      unreadable_.push_back(Unreadable{position, event.reason});
    } else if constexpr (std::is_same_v<Kind, Sample>) {
      Sample& sample = std::get<Sample>(events_.emplace_back(event));
      comms.Fill(sample);
    } else {
      if constexpr (std::is_same_v<Kind, ProcessExit> ||
                    std::is_same_v<Kind, ProcessStart>) {
        comms.Forget(event.tgid);
      }
      events_.push_back(event);
    }
    ++position;
  });
}

absl::Status DecodedBatch::ApplyTo(Session& session, IngestTally& tally) const {
  // The engine numbers only the readable events; its event `index` stands
  // at batch position index + (unreadable rows before it). Unreadable row
  // `next` comes before it exactly when its position <= index + next, so
  // merging the two keeps every rejection in batch order.
  size_t next = 0;
  const auto reject_unreadable_through = [&](uint64_t index) {
    while (next < unreadable_.size() &&
           unreadable_[next].position <= index + next) {
      tally.Reject(unreadable_[next].position, unreadable_[next].reason);
      ++next;
    }
  };
  RETURN_IF_ERROR(
      session.ApplyBatch(events_, unreadable_.size(),
                         [&](size_t index, const absl::Status& error) {
                           reject_unreadable_through(index);
                           tally.Reject(index + next, error);
                         }));
  reject_unreadable_through(events_.size());
  tally.EndBatch(events_.size() + unreadable_.size());
  return absl::OkStatus();
}

bool IngestStreams::Add(IngestStream* stream) {
  absl::MutexLock lock(&mu_);
  if (stopped_) return false;
  open_.insert(stream);
  return true;
}

void IngestStreams::Remove(IngestStream* stream) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](bool* stopping) { return !*stopping; }, &stopping_));
  open_.erase(stream);
}

void IngestStreams::StopAll(const absl::Status& why) {
  absl::flat_hash_set<IngestStream*> open;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    open = open_;
  }
  // Not under mu_: Stop takes the stream's lock, which its constructor
  // holds while it calls Add. Remove waits for stopping_, so every stream
  // stays alive meanwhile; Finish never runs OnDone inline.
  for (IngestStream* stream : open) stream->Stop(why);
  absl::MutexLock lock(&mu_);
  stopping_ = false;
}

IngestStream::IngestStream(SessionManager& sessions, StreamLimiter& limiter,
                           IngestStreams& streams, const Limits& limits,
                           grpc::CallbackServerContext& context,
                           grpc::ByteBuffer* response)
    : sessions_(sessions),
      limiter_(limiter),
      streams_(streams),
      max_batch_events_(limits.max_batch_events),
      context_(context),
      response_(response),
      comms_(limits.max_processes) {
  if (absl::Status admitted = limiter_.Admit(); !admitted.ok()) {
    FinishWith(admitted, 0);
    return;
  }
  admitted_ = true;
  if (!streams_.Add(this)) {
    FinishWith(absl::UnavailableError("the server is stopping"), 0);
    return;
  }
  // A Stop that came between Add and here has finished the call; no read
  // may start then. gRPC never runs OnReadDone inside StartRead.
  absl::MutexLock lock(&mu_);
  if (!finished_) StartRead(&read_);
}

void IngestStream::Stop(const absl::Status& why) {
  absl::Status finish;
  uint64_t batches = 0;
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (error_.ok()) error_ = why;
    // The thread applying a batch finishes the call after it (ApplyFrom
    // sees error_), without taking the batch parsed meanwhile.
    if (applying_ >= 0) return;
    finished_ = true;
    finish = error_;
    batches = batches_read_;
  }
  FinishWith(finish, batches);
}

void IngestStream::OnReadDone(bool ok) {
  if (!ok) {
    // The client closed its side, or the call was cancelled (then the
    // status is not delivered): answer with the totals once the batches
    // held are applied.
    EndReads(absl::OkStatus());
    return;
  }
  uint64_t number;
  int slot;
  {
    absl::MutexLock lock(&mu_);
    number = ++batches_read_;
    // A read is started only while a slot is free: the one neither
    // applying nor waiting.
    slot = (applying_ == 0 || waiting_ == 0) ? 1 : 0;
  }
  if (absl::Status parsed = Parse(slot, number); !parsed.ok()) {
    EndReads(parsed);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (applying_ >= 0) {
      // The thread applying takes this batch next, and starts the next
      // read then, when its own slot frees.
      waiting_ = slot;
      return;
    }
    applying_ = slot;
  }
  StartRead(&read_);
  ApplyFrom(slot);
}

absl::Status IngestStream::Parse(int slot, uint64_t number) {
  Slot& target = slots_[slot];
  target.number = number;
  v1::IngestBatch& batch = target.batch;
  // Clear() would free the columns message (proto3 frees message fields
  // on Clear); ClearColumns and clearing the events keep the columns'
  // storage and the Event objects for the parse to reuse. The columns
  // message then stays present while empty, which is why batches are read
  // by their sizes, never by has_columns().
  batch.clear_session();
  batch.clear_collector_losses();  // increments: a merge would add them up
  batch.mutable_events()->Clear();
  v1::EventColumns& columns = *batch.mutable_columns();
  ClearColumns(columns);
  // Fields this server does not know (from a newer client) are kept as
  // unknown fields, which a merge appends to: drop them per batch, or a
  // long stream would grow without bound.
  batch.GetReflection()->MutableUnknownFields(&batch)->Clear();
  columns.GetReflection()->MutableUnknownFields(&columns)->Clear();
  grpc::ProtoBufferReader reader(&read_);
  const bool parsed = batch.MergeFromBoundedZeroCopyStream(
      &reader, static_cast<int>(read_.Length()));
  read_.Clear();
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch ", number, " is not a valid schedcache.v1.IngestBatch"));
  }
  const int events = BatchEventCount(batch);
  if (events > max_batch_events_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "batch ", number, " has ", events, " events; the limit is ",
        max_batch_events_, " (flag --max_batch_events)"));
  }
  if (absl::Status form = CheckBatchForm(batch); !form.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", number, " ", form.message()));
  }
  target.events.Decode(batch, comms_);
  return absl::OkStatus();
}

void IngestStream::ApplyFrom(int slot) {
  while (true) {
    const absl::Status applied = Apply(slot);
    bool start_read = false;
    bool finish_call = false;
    absl::Status finish;
    uint64_t batches = 0;
    {
      absl::MutexLock lock(&mu_);
      // This batch precedes any a concurrent read failed on: its error wins.
      if (!applied.ok()) error_ = applied;
      if (error_.ok() && waiting_ >= 0) {
        // Take the batch parsed meanwhile; the slot just applied is free
        // for the next read.
        slot = std::exchange(waiting_, -1);
        applying_ = slot;
        start_read = !reads_over_;
      } else {
        applying_ = -1;
        waiting_ = -1;
        // A read in flight restarts the pipeline when it delivers; finish
        // now if none will (reads over) or the stream failed (a read still
        // in flight then ends with ok = false).
        if (finished_ || (error_.ok() && !reads_over_)) return;
        finished_ = true;
        finish_call = true;
        finish = error_;
        batches = batches_read_;
      }
    }
    if (finish_call) {
      FinishWith(finish, batches);
      return;
    }
    if (start_read) StartRead(&read_);
  }
}

void IngestStream::EndReads(absl::Status why) {
  absl::Status finish;
  uint64_t batches = 0;
  {
    absl::MutexLock lock(&mu_);
    reads_over_ = true;
    if (!why.ok() && error_.ok()) error_ = std::move(why);
    // While a batch is applying, the thread applying it finishes the call.
    if (finished_ || applying_ >= 0) return;
    finished_ = true;
    finish = error_;
    batches = batches_read_;
  }
  FinishWith(finish, batches);
}

absl::Status IngestStream::Apply(int slot) {
  const Slot& source = slots_[slot];
  const v1::IngestBatch& batch = source.batch;
  if (session_ == nullptr) {
    absl::StatusOr<std::shared_ptr<Session>> session =
        sessions_.Find(batch.session());
    if (!session.ok()) return session.status();
    session_ = *std::move(session);
  } else if (!batch.session().empty() &&
             batch.session() != session_->name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch ", source.number, " names session ",
        QuoteForMessage(batch.session()), " but this stream feeds \"",
        session_->name(), "\""));
  }
  RETURN_IF_ERROR(source.events.ApplyTo(*session_, tally_));
  if (batch.has_collector_losses()) {
    session_->AddCollectorLosses(batch.collector_losses());
  }
  return absl::OkStatus();
}

void IngestStream::FinishWith(const absl::Status& status, uint64_t batches) {
  if (status.ok()) {
    v1::IngestSummary summary;
    tally_.Fill(summary);
    summary.set_batches(batches);
    bool own_buffer = false;
    const grpc::Status serialized =
        grpc::SerializationTraits<v1::IngestSummary>::Serialize(
            summary, response_, &own_buffer);
    Finish(serialized);
    return;
  }
  // A failed call carries no response message, so the summary rides in
  // the trailers, and the status message says how far the stream got.
  v1::IngestSummary summary;
  tally_.Fill(summary);
  summary.set_batches(batches);
  context_.AddTrailingMetadata(kIngestSummaryTrailer,
                               summary.SerializeAsString());
  Finish(ToGrpcStatus(absl::Status(
      status.code(),
      absl::StrCat(status.message(), " (this stream: ", tally_.accepted(),
                   " events accepted, ", tally_.rejected(), " rejected)"))));
}

void IngestStream::OnDone() {
  if (admitted_) {
    streams_.Remove(this);
    limiter_.Release();
  }
  delete this;
}

}  // namespace schedcache
