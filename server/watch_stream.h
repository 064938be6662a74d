// WatchStream: one WatchPreferences call. It is its session's
// PreferenceSink: the session queues changes into it (with the session's
// lock held), and the stream writes them out one at a time. The stream
// ends with OK when the session closes (deleted, or the server stops), and
// when the client cancels.
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

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/limits.h"
#include "server/preference_sink.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"

namespace schedcache {

class WatchStream final : public PreferenceSink,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  // Start begins a WatchPreferences call; gRPC owns the returned reactor.
  // `limiter` and `changes_dropped` (which counts every change dropped from
  // a full queue, for the metrics) must outlive the call. Once attached,
  // the initial metadata carries kWatchAttachedMetadata
  // (common/service_defaults.h).
  static grpc::ServerWriteReactor<v1::PreferenceChange>* Start(
      SessionManager& sessions, StreamLimiter& limiter,
      std::atomic<uint64_t>& changes_dropped, const Limits& limits,
      grpc::CallbackServerContext& context,
      const v1::WatchPreferencesRequest& request);

  bool Enqueue(const v1::PreferenceChange& change) override
      ABSL_LOCKS_EXCLUDED(mu_);
  void Flush() override ABSL_LOCKS_EXCLUDED(mu_);
  void Close() override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Reactor;

  WatchStream(StreamLimiter& limiter, std::atomic<uint64_t>& changes_dropped,
              int max_queue);

  // OnOpDone runs when the initial metadata or a write completed: starts
  // the next write, or finishes when closing.
  void OnOpDone(bool ok) ABSL_LOCKS_EXCLUDED(mu_);
  void OnCancel() ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone() ABSL_LOCKS_EXCLUDED(mu_);
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
  v1::PreferenceChange in_flight_;

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<v1::PreferenceChange> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t missed_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_WATCH_STREAM_H_
