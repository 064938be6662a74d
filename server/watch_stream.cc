#include "server/watch_stream.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

// FilterFromProto reads the policy and tgid filters that WatchPreferences
// and WatchScans requests share; InvalidArgument names a tgid that is not
// > 0.
template <typename Request>
absl::StatusOr<WatchFilter> FilterFromProto(const Request& request) {
  WatchFilter filter;
  filter.policy = request.policy();
  for (int i = 0; i < request.tgid_size(); ++i) {
    const int32_t tgid = request.tgid(i);
    if (tgid <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tgid[", i, "] ", tgid, " is not > 0"));
    }
    filter.tgids.insert(tgid);
  }
  return filter;
}

}  // namespace

absl::StatusOr<WatchSpec> WatchSpecFromProto(
    const v1::WatchPreferencesRequest& request) {
  absl::StatusOr<WatchFilter> filter = FilterFromProto(request);
  if (!filter.ok()) return filter.status();
  WatchSpec spec;
  spec.snapshot = request.snapshot();
  spec.resume_incarnation = request.resume_incarnation();
  spec.resume_after_sequence = request.resume_after_sequence();
  spec.filter = *std::move(filter);
  return spec;
}

absl::StatusOr<WatchFilter> ScanFilterFromProto(
    const v1::WatchScansRequest& request) {
  return FilterFromProto(request);
}

grpc::ServerWriteReactor<v1::WatchPreferencesResponse>* WatchStream::Start(
    SessionManager& sessions, StreamLimiter& limiter,
    std::atomic<uint64_t>& changes_dropped, const Limits& limits,
    grpc::CallbackServerContext& context,
    const v1::WatchPreferencesRequest& request) {
  // Not make_shared: the constructor is private.
  std::shared_ptr<WatchStream> stream(
      new WatchStream(limiter, changes_dropped, limits.max_watch_queue));
  absl::StatusOr<WatchSpec> spec;
  return Open(
      stream, context,
      [&]() -> absl::StatusOr<std::shared_ptr<Session>> {
        spec = WatchSpecFromProto(request);
        if (!spec.ok()) return spec.status();
        return sessions.Find(request.session());
      },
      [&](Session& session) { return session.AddWatcher(stream, *spec); });
}

bool WatchStream::EnqueueStart(std::vector<v1::WatchPreferencesResponse> start) {
  return QueueStart(std::move(start));
}

bool WatchStream::Enqueue(const v1::PreferenceChange& change) {
  v1::WatchPreferencesResponse message;
  *message.mutable_change() = change;
  return Queue(std::move(message));
}

std::optional<v1::WatchPreferencesResponse> WatchStream::MissedNotice(
    uint64_t missed, v1::WatchPreferencesResponse* next) const {
  // Changes lost at the very end are not told on the stream (a change
  // carries its own count); the metrics count them.
  if (next != nullptr) next->mutable_change()->set_missed_before(missed);
  return std::nullopt;
}

grpc::ServerWriteReactor<v1::WatchScansResponse>* ScanWatchStream::Start(
    SessionManager& sessions, StreamLimiter& limiter,
    std::atomic<uint64_t>& scans_dropped, const Limits& limits,
    grpc::CallbackServerContext& context,
    const v1::WatchScansRequest& request) {
  std::shared_ptr<ScanWatchStream> stream(
      new ScanWatchStream(limiter, scans_dropped, limits.max_watch_queue));
  absl::StatusOr<WatchFilter> filter;
  return Open(
      stream, context,
      [&]() -> absl::StatusOr<std::shared_ptr<Session>> {
        filter = ScanFilterFromProto(request);
        if (!filter.ok()) return filter.status();
        return sessions.Find(request.session());
      },
      [&](Session& session) {
        return session.AddScanWatcher(stream, *std::move(filter));
      });
}

bool ScanWatchStream::Enqueue(const v1::ScanEvent& scan) {
  v1::WatchScansResponse message;
  *message.mutable_scan() = scan;
  return Queue(std::move(message));
}

std::optional<v1::WatchScansResponse> ScanWatchStream::MissedNotice(
    uint64_t missed, v1::WatchScansResponse*) const {
  v1::WatchScansResponse notice;
  notice.mutable_dropped()->set_count(missed);
  return notice;
}

}  // namespace schedcache
