// QueuedWriter: the write side of a server-streaming watch call (one
// WatchPreferences or WatchScans stream) as its session's sink: the
// session queues messages into it with its lock held, and the stream
// writes them out one at a time, with no lock held while gRPC runs. The
// queue is bounded: a message that finds it full is dropped and counted,
// and the stream tells its client how many were lost (MissedNotice). The
// stream ends with the session's Close status (NOT_FOUND when deleted,
// UNAVAILABLE when the server stops) once everything queued is written,
// and when the client cancels.
//
// The server sends initial metadata (with kWatchAttachedMetadata) only once
// the stream is attached to its session, so a client that waits for it
// knows every later message will reach it.
//
// Thread contract: thread-safe. StartWrite and Finish are called by
// whoever claimed the write slot (`writing_`) or the finish under mu_, with
// no lock held; Finish only while no write is in flight, so the reactor is
// alive whenever one of them is called.
#ifndef SCHEDCACHE_SERVER_QUEUED_WRITER_H_
#define SCHEDCACHE_SERVER_QUEUED_WRITER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/service_defaults.h"
#include "server/session.h"
#include "server/stream_limiter.h"

namespace schedcache {

// `Response` is the call's stream message; `Sink` the interface the
// session queues through (a StreamSink), whose Flush and Close this
// implements.
template <typename Response, typename Sink>
class QueuedWriter : public Sink {
 public:
  void Flush() final ABSL_LOCKS_EXCLUDED(mu_);
  void Close(const absl::Status& why) final ABSL_LOCKS_EXCLUDED(mu_);

 protected:
  // `limiter` and `dropped` (which counts every message dropped from a
  // full queue, for the metrics) must outlive the call.
  QueuedWriter(StreamLimiter& limiter, std::atomic<uint64_t>& dropped,
               int max_queue)
      : limiter_(limiter),
        dropped_(dropped),
        max_queue_(static_cast<size_t>(max_queue)) {}

  // Open starts the call of `stream` (the derived object): `find` reads the
  // request and finds its session, then, once the limiter admitted the
  // stream, `attach` attaches it to that session. Either's error ends the
  // call with it; gRPC owns the returned reactor.
  static grpc::ServerWriteReactor<Response>* Open(
      std::shared_ptr<QueuedWriter> stream,
      grpc::CallbackServerContext& context,
      absl::FunctionRef<absl::StatusOr<std::shared_ptr<Session>>()> find,
      absl::FunctionRef<absl::Status(Session&)> attach);

  // QueueStart queues what the stream sends before any other message;
  // never dropped. Returns true when the caller must Flush.
  bool QueueStart(std::vector<Response> start) ABSL_LOCKS_EXCLUDED(mu_);
  // Queue queues `message`, or drops and counts it when max_queue messages
  // wait. Returns true when the caller must Flush.
  bool Queue(Response message) ABSL_LOCKS_EXCLUDED(mu_);

  // MissedNotice tells the client that `missed` messages were dropped just
  // before `next` (nullptr: at the end of the stream): it marks `next`, or
  // returns a message to send before it.
  virtual std::optional<Response> MissedNotice(uint64_t missed,
                                               Response* next) const = 0;
  // Detach removes the stream from `session` when the call is done.
  virtual void Detach(Session& session) = 0;

 private:
  class Reactor;

  // OnOpDone runs when the initial metadata or a write completed: starts
  // the next write, or finishes when closing.
  void OnOpDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_);
  void OnCancel() ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone() ABSL_LOCKS_EXCLUDED(mu_);
  // ClaimWrite moves the next message into in_flight_ and takes the write
  // slot; false when nothing is queued or the slot is taken.
  bool ClaimWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ClaimFinish returns the reactor to Finish, once; nullptr afterwards.
  Reactor* ClaimFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FinishEarly ends a call that never got attached to a session.
  void FinishEarly(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // open is false once the stream stopped taking messages.
  bool open() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !finished_ && closing_.ok() && !cancelled_;
  }

  StreamLimiter& limiter_;
  std::atomic<uint64_t>& dropped_;
  const size_t max_queue_;
  // Set before the call can end, read in OnDone.
  std::shared_ptr<Session> session_;
  bool admitted_ = false;
  // Owned by the holder of the write slot.
  Response in_flight_;

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;
  // What the stream starts with, sent before queue_; start_next_ is the
  // index of the next one to send.
  std::vector<Response> start_ ABSL_GUARDED_BY(mu_);
  size_t start_next_ ABSL_GUARDED_BY(mu_) = 0;
  // At most max_queue_ messages (and a missed notice).
  std::deque<Response> queue_ ABSL_GUARDED_BY(mu_);
  // Dropped since the last notice.
  uint64_t missed_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Close: the status the stream ends with once drained.
  absl::Status closing_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Reactor forwards gRPC's reactions to the shared stream state, which the
// session may hold longer than gRPC holds the reactor.
template <typename Response, typename Sink>
class QueuedWriter<Response, Sink>::Reactor final
    : public grpc::ServerWriteReactor<Response> {
 public:
  explicit Reactor(std::shared_ptr<QueuedWriter> stream)
      : stream_(std::move(stream)) {}
  void OnSendInitialMetadataDone(bool ok) override { stream_->OnOpDone(ok); }
  void OnWriteDone(bool ok) override { stream_->OnOpDone(ok); }
  void OnCancel() override { stream_->OnCancel(); }
  void OnDone() override {
    stream_->OnDone();
    delete this;
  }

 private:
  const std::shared_ptr<QueuedWriter> stream_;
};

template <typename Response, typename Sink>
grpc::ServerWriteReactor<Response>* QueuedWriter<Response, Sink>::Open(
    std::shared_ptr<QueuedWriter> stream, grpc::CallbackServerContext& context,
    absl::FunctionRef<absl::StatusOr<std::shared_ptr<Session>>()> find,
    absl::FunctionRef<absl::Status(Session&)> attach) {
  auto* reactor = new Reactor(stream);
  {
    absl::MutexLock lock(&stream->mu_);
    stream->reactor_ = reactor;
    // The initial metadata holds the write slot until it is sent.
    stream->writing_ = true;
  }
  absl::StatusOr<std::shared_ptr<Session>> session = find();
  if (!session.ok()) {
    stream->FinishEarly(session.status());
    return reactor;
  }
  if (absl::Status admitted = stream->limiter_.Admit(); !admitted.ok()) {
    stream->FinishEarly(admitted);
    return reactor;
  }
  stream->admitted_ = true;
  stream->session_ = *session;
  if (absl::Status attached = attach(**session); !attached.ok()) {
    stream->FinishEarly(attached);
    return reactor;
  }
  context.AddInitialMetadata(kWatchAttachedMetadata, "1");
  reactor->StartSendInitialMetadata();
  return reactor;
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::FinishEarly(const absl::Status& status) {
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    finisher = ClaimFinish();
  }
  if (finisher != nullptr) finisher->Finish(ToGrpcStatus(status));
}

template <typename Response, typename Sink>
bool QueuedWriter<Response, Sink>::ClaimWrite() {
  if (writing_) return false;
  if (start_next_ < start_.size()) {
    in_flight_ = std::move(start_[start_next_++]);
    if (start_next_ == start_.size()) {
      // Sent: a snapshot of many processes is not kept for the stream's life.
      start_ = {};
      start_next_ = 0;
    }
  } else if (!queue_.empty()) {
    in_flight_ = std::move(queue_.front());
    queue_.pop_front();
  } else {
    return false;
  }
  writing_ = true;
  return true;
}

template <typename Response, typename Sink>
bool QueuedWriter<Response, Sink>::QueueStart(std::vector<Response> start) {
  absl::MutexLock lock(&mu_);
  if (!open()) return false;
  start_ = std::move(start);
  start_next_ = 0;
  return ClaimWrite();
}

template <typename Response, typename Sink>
bool QueuedWriter<Response, Sink>::Queue(Response message) {
  absl::MutexLock lock(&mu_);
  if (!open()) return false;
  if (queue_.size() >= max_queue_) {
    ++missed_;
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (missed_ > 0) {
    if (std::optional<Response> notice = MissedNotice(missed_, &message)) {
      queue_.push_back(*std::move(notice));
    }
    missed_ = 0;
  }
  queue_.push_back(std::move(message));
  return ClaimWrite();
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::Flush() {
  Reactor* writer = nullptr;
  {
    absl::MutexLock lock(&mu_);
    writer = reactor_;  // the caller holds the write slot: not finished
  }
  writer->StartWrite(&in_flight_);
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::OnOpDone(bool ok) {
  Reactor* writer = nullptr;
  Reactor* finisher = nullptr;
  grpc::Status status = grpc::Status::CANCELLED;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok || cancelled_) {
      finisher = ClaimFinish();
    } else if (ClaimWrite()) {
      writer = reactor_;
    } else if (!closing_.ok()) {
      finisher = ClaimFinish();
      status = ToGrpcStatus(closing_);
    }
  }
  if (writer != nullptr) writer->StartWrite(&in_flight_);
  if (finisher != nullptr) finisher->Finish(status);
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::Close(const absl::Status& why) {
  Reactor* writer = nullptr;
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (!open()) return;
    closing_ = why;
    // Losses at the very end are told too, where the stream has a way.
    if (missed_ > 0) {
      if (std::optional<Response> notice = MissedNotice(missed_, nullptr)) {
        queue_.push_back(*std::move(notice));
      }
      missed_ = 0;
    }
    // With a write in flight, OnOpDone drains the queue, then finishes.
    if (ClaimWrite()) {
      writer = reactor_;
    } else if (!writing_) {
      finisher = ClaimFinish();
    }
  }
  if (writer != nullptr) writer->StartWrite(&in_flight_);
  if (finisher != nullptr) finisher->Finish(ToGrpcStatus(why));
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::OnCancel() {
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    start_.clear();
    queue_.clear();
    if (!writing_) finisher = ClaimFinish();
  }
  if (finisher != nullptr) finisher->Finish(grpc::Status::CANCELLED);
}

template <typename Response, typename Sink>
typename QueuedWriter<Response, Sink>::Reactor*
QueuedWriter<Response, Sink>::ClaimFinish() {
  if (finished_) return nullptr;
  finished_ = true;
  return reactor_;
}

template <typename Response, typename Sink>
void QueuedWriter<Response, Sink>::OnDone() {
  if (session_ != nullptr) Detach(*session_);
  if (admitted_) limiter_.Release();
  absl::MutexLock lock(&mu_);
  reactor_ = nullptr;
}

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_QUEUED_WRITER_H_
