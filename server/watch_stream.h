// WatchStream: one WatchPreferences call, its session's PreferenceSink:
// the session queues what the stream starts with (a snapshot or a replay,
// then Synced) and then its changes into it; QueuedWriter writes them
// out. Changes dropped from a full queue are told in the next change's
// missed_before.
//
// ScanWatchStream: one WatchScans call, its session's ScanSink: every
// executed scan its filters match; scans dropped from a full queue are
// told in a ScansDropped message where they were lost, also at the end.
//
// Thread contract: thread-safe (see QueuedWriter).
#ifndef SCHEDCACHE_SERVER_WATCH_STREAM_H_
#define SCHEDCACHE_SERVER_WATCH_STREAM_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/status/statusor.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/limits.h"
#include "server/queued_writer.h"
#include "server/session.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"
#include "server/stream_sink.h"

namespace schedcache {

// WatchSpecFromProto reads a request's snapshot, resume and filters;
// InvalidArgument names a tgid that is not > 0. The session checks the
// rest (Session::AddWatcher).
absl::StatusOr<WatchSpec> WatchSpecFromProto(
    const v1::WatchPreferencesRequest& request);
// ScanFilterFromProto reads a WatchScans request's filters, the same way.
absl::StatusOr<WatchFilter> ScanFilterFromProto(
    const v1::WatchScansRequest& request);

class WatchStream final
    : public QueuedWriter<v1::WatchPreferencesResponse, PreferenceSink> {
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

  bool EnqueueStart(std::vector<v1::WatchPreferencesResponse> start) override;
  bool Enqueue(const v1::PreferenceChange& change) override;

 private:
  using QueuedWriter::QueuedWriter;

  std::optional<v1::WatchPreferencesResponse> MissedNotice(
      uint64_t missed, v1::WatchPreferencesResponse* next) const override;
  void Detach(Session& session) override { session.RemoveWatcher(this); }
};

class ScanWatchStream final
    : public QueuedWriter<v1::WatchScansResponse, ScanSink> {
 public:
  // Start begins a WatchScans call, as WatchStream::Start; `scans_dropped`
  // counts every scan dropped from a full queue.
  static grpc::ServerWriteReactor<v1::WatchScansResponse>* Start(
      SessionManager& sessions, StreamLimiter& limiter,
      std::atomic<uint64_t>& scans_dropped, const Limits& limits,
      grpc::CallbackServerContext& context,
      const v1::WatchScansRequest& request);

  bool Enqueue(const v1::ScanEvent& scan) override;

 private:
  using QueuedWriter::QueuedWriter;

  std::optional<v1::WatchScansResponse> MissedNotice(
      uint64_t missed, v1::WatchScansResponse* next) const override;
  void Detach(Session& session) override { session.RemoveScanWatcher(this); }
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_WATCH_STREAM_H_
