#include "server/watch_stream.h"

#include <utility>

#include "common/grpc_status.h"
#include "common/service_defaults.h"

namespace schedcache {

// Reactor forwards gRPC's reactions to the shared stream state, which the
// session may hold longer than gRPC holds the reactor.
class WatchStream::Reactor final
    : public grpc::ServerWriteReactor<v1::PreferenceChange> {
 public:
  explicit Reactor(std::shared_ptr<WatchStream> stream)
      : stream_(std::move(stream)) {}
  void OnSendInitialMetadataDone(bool ok) override { stream_->OnOpDone(ok); }
  void OnWriteDone(bool ok) override { stream_->OnOpDone(ok); }
  void OnCancel() override { stream_->OnCancel(); }
  void OnDone() override {
    stream_->OnDone();
    delete this;
  }

 private:
  const std::shared_ptr<WatchStream> stream_;
};

WatchStream::WatchStream(StreamLimiter& limiter,
                         std::atomic<uint64_t>& changes_dropped, int max_queue)
    : limiter_(limiter),
      changes_dropped_(changes_dropped),
      max_queue_(static_cast<size_t>(max_queue)) {}

grpc::ServerWriteReactor<v1::PreferenceChange>* WatchStream::Start(
    SessionManager& sessions, StreamLimiter& limiter,
    std::atomic<uint64_t>& changes_dropped, const Limits& limits,
    grpc::CallbackServerContext& context,
    const v1::WatchPreferencesRequest& request) {
  // Not make_shared: the constructor is private.
  std::shared_ptr<WatchStream> stream(
      new WatchStream(limiter, changes_dropped, limits.max_watch_queue));
  auto* reactor = new Reactor(stream);
  {
    absl::MutexLock lock(&stream->mu_);
    stream->reactor_ = reactor;
    // The initial metadata holds the write slot until it is sent.
    stream->writing_ = true;
  }
  absl::StatusOr<std::shared_ptr<Session>> session =
      sessions.Find(request.session());
  if (!session.ok()) {
    stream->FinishEarly(session.status());
    return reactor;
  }
  if (absl::Status admitted = limiter.Admit(); !admitted.ok()) {
    stream->FinishEarly(admitted);
    return reactor;
  }
  stream->admitted_ = true;
  stream->session_ = *session;
  if (absl::Status attached = (*session)->AddWatcher(stream); !attached.ok()) {
    stream->FinishEarly(attached);
    return reactor;
  }
  context.AddInitialMetadata(kWatchAttachedMetadata, "1");
  reactor->StartSendInitialMetadata();
  return reactor;
}

void WatchStream::FinishEarly(const absl::Status& status) {
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    finisher = ClaimFinish();
  }
  if (finisher != nullptr) finisher->Finish(ToGrpcStatus(status));
}

bool WatchStream::Enqueue(const v1::PreferenceChange& change) {
  absl::MutexLock lock(&mu_);
  if (finished_ || closing_ || cancelled_) return false;
  if (queue_.size() >= max_queue_) {
    ++missed_;
    changes_dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  v1::PreferenceChange& queued = queue_.emplace_back(change);
  queued.set_missed_before(missed_);
  missed_ = 0;
  if (writing_) return false;
  writing_ = true;
  in_flight_ = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

void WatchStream::Flush() {
  Reactor* writer = nullptr;
  {
    absl::MutexLock lock(&mu_);
    writer = reactor_;  // the caller holds the write slot: not finished
  }
  writer->StartWrite(&in_flight_);
}

void WatchStream::OnOpDone(bool ok) {
  Reactor* writer = nullptr;
  Reactor* finisher = nullptr;
  grpc::Status status = grpc::Status::OK;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok || cancelled_) {
      finisher = ClaimFinish();
      status = grpc::Status::CANCELLED;
    } else if (!queue_.empty()) {
      writing_ = true;
      in_flight_ = std::move(queue_.front());
      queue_.pop_front();
      writer = reactor_;
    } else if (closing_) {
      finisher = ClaimFinish();
    }
  }
  if (writer != nullptr) writer->StartWrite(&in_flight_);
  if (finisher != nullptr) finisher->Finish(status);
}

void WatchStream::Close() {
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    // With a write in flight, OnOpDone drains the queue, then finishes.
    if (!writing_) finisher = ClaimFinish();
  }
  if (finisher != nullptr) finisher->Finish(grpc::Status::OK);
}

void WatchStream::OnCancel() {
  Reactor* finisher = nullptr;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    queue_.clear();
    if (!writing_) finisher = ClaimFinish();
  }
  if (finisher != nullptr) finisher->Finish(grpc::Status::CANCELLED);
}

WatchStream::Reactor* WatchStream::ClaimFinish() {
  if (finished_) return nullptr;
  finished_ = true;
  return reactor_;
}

void WatchStream::OnDone() {
  if (session_ != nullptr) session_->RemoveWatcher(this);
  if (admitted_) limiter_.Release();
  absl::MutexLock lock(&mu_);
  reactor_ = nullptr;
}

}  // namespace schedcache
