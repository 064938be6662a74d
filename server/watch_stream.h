// WatchStream: one WatchPreferences call. It is its session's
// PreferenceSink: the session queues what the stream starts with and then
// its changes into it (with the session's lock held), and the stream
// writes them out one at a time. The stream ends with the session's Close
// status (NOT_FOUND when deleted, UNAVAILABLE when the server stops) once
// everything queued is written, and when the client cancels.
//
// The server sends initial metadata only once the stream is attached to
// its session, so a client that waits for it knows every later change will
// reach it.
//
// Thread contract: thread-safe. StartWrite and Finish are called by
// whoever claimed the write slot (`writing_`) or the finish under mu_, with
// no lock held; Finish only while no write is in flight, so the reactor is
// alive whenever one of them is called.
#ifndef SCHEDCACHE_SERVER_WATCH_STREAM_H_
#define SCHEDCACHE_SERVER_WATCH_STREAM_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/limits.h"
#include "server/preference_sink.h"
#include "server/session.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"

namespace schedcache {

// WatchSpecFromProto reads a request's snapshot, resume and filters;
// InvalidArgument names a tgid that is not > 0. The session checks the
// rest (Session::AddWatcher).
absl::StatusOr<WatchSpec> WatchSpecFromProto(
    const v1::WatchPreferencesRequest& request);

class WatchStream final : public PreferenceSink,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  // Start begins a WatchPreferences call; gRPC owns the returned reactor.
  // `limiter` and `changes_dropped` (which counts every change dropped from
  // a full queue, for the metrics) must outlive the call. Once attached,
  // the initial metadata carries kWatchAttachedMetadata
  // (common/service_defaults.h).
  static grpc::ServerWriteReactor<v1::WatchPreferencesResponse>* Start(
      SessionManager& sessions, StreamLimiter& limiter,
      std::atomic<uint64_t>& changes_dropped, const Limits& limits,
      grpc::CallbackServerContext& context,
      const v1::WatchPreferencesRequest& request);

  bool EnqueueStart(std::vector<v1::WatchPreferencesResponse> start) override
      ABSL_LOCKS_EXCLUDED(mu_);
  bool Enqueue(const v1::PreferenceChange& change) override
      ABSL_LOCKS_EXCLUDED(mu_);
  void Flush() override ABSL_LOCKS_EXCLUDED(mu_);
  void Close(const absl::Status& why) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Reactor;

  WatchStream(StreamLimiter& limiter, std::atomic<uint64_t>& changes_dropped,
              int max_queue);

  // OnOpDone runs when the initial metadata or a write completed: starts
  // the next write, or finishes when closing.
  void OnOpDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_);
  void OnCancel() ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone() ABSL_LOCKS_EXCLUDED(mu_);
  // ClaimWrite moves the next queued message into in_flight_ and takes the
  // write slot; false when nothing is queued or the slot is taken.
  bool ClaimWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ClaimFinish returns the reactor to Finish, once; nullptr afterwards.
  Reactor* ClaimFinish() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FinishEarly ends a call that never got attached to a session.
  void FinishEarly(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);

  StreamLimiter& limiter_;
  std::atomic<uint64_t>& changes_dropped_;
  const size_t max_queue_;
  // Set before the call can end, read in OnDone.
  std::shared_ptr<Session> session_;
  bool admitted_ = false;
  // Owned by the holder of the write slot.
  v1::WatchPreferencesResponse in_flight_;

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;
  // What the stream starts with, sent before queue_; start_next_ is the
  // index of the next one to send.
  std::vector<v1::WatchPreferencesResponse> start_ ABSL_GUARDED_BY(mu_);
  size_t start_next_ ABSL_GUARDED_BY(mu_) = 0;
  // Changes, at most max_queue_.
  std::deque<v1::WatchPreferencesResponse> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t missed_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // Set by Close: the status the stream ends with once drained.
  absl::Status closing_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_WATCH_STREAM_H_
