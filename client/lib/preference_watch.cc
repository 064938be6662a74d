// PreferenceWatch: one WatchPreferences stream at a time, opened again
// with a resume when it breaks and WatchOptions::reconnect asks.
#include <algorithm>
#include <memory>
#include <utility>

#include <grpcpp/client_context.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc_status.h"
#include "common/service_defaults.h"
#include "schedcache/client.h"

namespace schedcache::client {

class PreferenceWatch::Impl {
 public:
  // Opens the first stream and waits until it is attached or refused.
  Impl(v1::SchedCache::Stub& stub, absl::string_view session,
       WatchOptions options)
      : stub_(stub), options_(std::move(options)) {
    request_.set_session(std::string(session));
    request_.set_snapshot(options_.snapshot);
    request_.set_policy(options_.policy);
    for (int32_t tgid : options_.tgids) request_.add_tgid(tgid);
    attached_ = Open();
  }
  ~Impl() {
    Cancel();
    if (stream_ != nullptr) stream_->reader->Finish().ok();  // reap it
  }

  bool attached() const { return attached_; }
  int reconnects() const {
    absl::MutexLock lock(&mu_);
    return reconnects_;
  }

  std::optional<v1::WatchPreferencesResponse> Next() {
    v1::WatchPreferencesResponse response;
    while (stream_ != nullptr) {
      if (stream_->reader->Read(&response)) {
        Track(response);
        return response;
      }
      const absl::Status ended = ToAbslStatus(stream_->reader->Finish());
      Drop();
      if (!Reconnectable(ended, /*attached=*/true) || !Reconnect()) {
        if (end_.ok()) end_ = ended;
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  absl::Status Finish() const { return end_; }

  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (stream_ != nullptr) stream_->context.TryCancel();
  }

 private:
  // Stream is one WatchPreferences call.
  struct Stream {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::WatchPreferencesResponse>> reader;
  };

  // Open starts a stream with request_ (resuming when a position is known)
  // and waits for the server's answer; true when attached. A refused
  // stream stays in stream_, so Next reads its status.
  bool Open() {
    auto stream = std::make_unique<Stream>();
    v1::WatchPreferencesRequest request = request_;
    if (incarnation_ != 0) {
      request.set_resume_incarnation(incarnation_);
      request.set_resume_after_sequence(sequence_);
    }
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) stream->context.TryCancel();
      stream->reader = stub_.WatchPreferences(&stream->context, request);
      stream_ = std::move(stream);
    }
    stream_->reader->WaitForInitialMetadata();
    // A refused call ends trailers-only, without this key.
    return stream_->context.GetServerInitialMetadata().count(
               kWatchAttachedMetadata) > 0;
  }

  // Drop forgets the ended stream.
  void Drop() {
    absl::MutexLock lock(&mu_);
    stream_.reset();
  }

  // Reconnectable says whether a stream that ended with `status` is opened
  // again: UNAVAILABLE, and while reconnecting (not attached) NOT_FOUND.
  bool Reconnectable(const absl::Status& status, bool attached) const {
    if (!options_.reconnect) return false;
    return status.code() == absl::StatusCode::kUnavailable ||
           (!attached && status.code() == absl::StatusCode::kNotFound);
  }

  // Reconnect opens streams, backing off between them, until one is
  // attached (true), one fails for good, or Cancel (false; end_ says why).
  bool Reconnect() {
    absl::Duration backoff = options_.initial_backoff;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        // Cancel wakes the wait.
        mu_.AwaitWithTimeout(absl::Condition(&cancelled_), backoff);
        if (cancelled_) {
          end_ = absl::CancelledError("the watch was cancelled");
          return false;
        }
        ++reconnects_;
      }
      if (Open()) return true;
      const absl::Status refused = ToAbslStatus(stream_->reader->Finish());
      Drop();
      if (!Reconnectable(refused, /*attached=*/false)) {
        end_ = refused;
        return false;
      }
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
  }

  // Track remembers the position a resume starts after: the latest Synced
  // or change (a snapshot entry is not a position until its Synced).
  void Track(const v1::WatchPreferencesResponse& response) {
    if (response.has_synced()) {
      incarnation_ = response.synced().incarnation();
      sequence_ = response.synced().sequence();
    } else if (response.has_change() && !response.change().snapshot()) {
      incarnation_ = response.change().incarnation();
      sequence_ = response.change().sequence();
    }
  }

  v1::SchedCache::Stub& stub_;
  const WatchOptions options_;
  v1::WatchPreferencesRequest request_;
  bool attached_ = false;
  // Where a resume starts; incarnation 0: nothing read yet.
  uint64_t incarnation_ = 0;
  uint64_t sequence_ = 0;
  absl::Status end_;

  mutable absl::Mutex mu_;
  // Written under mu_ (so Cancel reaches it), read by the reading thread.
  std::unique_ptr<Stream> stream_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  int reconnects_ ABSL_GUARDED_BY(mu_) = 0;
};

PreferenceWatch::PreferenceWatch(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PreferenceWatch::~PreferenceWatch() = default;
bool PreferenceWatch::attached() const { return impl_->attached(); }
std::optional<v1::WatchPreferencesResponse> PreferenceWatch::Next() {
  return impl_->Next();
}
absl::Status PreferenceWatch::Finish() { return impl_->Finish(); }
void PreferenceWatch::Cancel() { impl_->Cancel(); }
int PreferenceWatch::reconnects() const { return impl_->reconnects(); }

std::unique_ptr<PreferenceWatch> Client::Watch(
    absl::string_view session, const WatchOptions& options) const {
  return std::unique_ptr<PreferenceWatch>(new PreferenceWatch(
      std::make_unique<PreferenceWatch::Impl>(*stub_, session, options)));
}

}  // namespace schedcache::client
