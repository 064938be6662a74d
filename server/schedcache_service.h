// SchedCacheService: the schedcache.v1.SchedCache handlers. Each handler
// validates its request and delegates: sessions to SessionManager/Session,
// their creation to SessionBuilder (which builds off the callback threads),
// streams to IngestStream/WatchStream/ScanWatchStream. Handlers use gRPC's
// callback API and never wait on anything but a session's short lock.
//
// Thread contract: thread-safe; everything it refers to must outlive it.
#ifndef SCHEDCACHE_SERVER_SCHEDCACHE_SERVICE_H_
#define SCHEDCACHE_SERVER_SCHEDCACHE_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "policies/policy_registry.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "server/ingest_stream.h"
#include "server/limits.h"
#include "server/session_builder.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"
#include "topology/topology.h"

namespace schedcache {

// Ingest is a raw method (bytes in, bytes out): IngestStream parses each
// batch into one message it keeps, so the batch's columns keep their storage
// from batch to batch (the generated handler would parse into a cleared
// message, which frees them).
class SchedCacheService final
    : public v1::SchedCache::WithRawCallbackMethod_Ingest<
          v1::SchedCache::CallbackService> {
 public:
  SchedCacheService(const PolicyRegistry& registry, SessionManager& sessions,
                    SessionBuilder& builder,
                    std::shared_ptr<const Topology> host, const Limits& limits);

  // StreamStats is what the metrics scrape reads of the streams.
  struct StreamStats {
    int ingest_open = 0;
    int watch_open = 0;
    int scan_watch_open = 0;
    uint64_t watch_changes_dropped = 0;  // since start, every stream's
    uint64_t watch_scans_dropped = 0;    // since start, every stream's
  };
  StreamStats Streams() const;

  grpc::ServerUnaryReactor* GetTopology(
      grpc::CallbackServerContext* context,
      const v1::GetTopologyRequest* request,
      v1::GetTopologyResponse* response) override;
  grpc::ServerUnaryReactor* ListPolicies(
      grpc::CallbackServerContext* context,
      const v1::ListPoliciesRequest* request,
      v1::ListPoliciesResponse* response) override;
  grpc::ServerUnaryReactor* CreateSession(
      grpc::CallbackServerContext* context,
      const v1::CreateSessionRequest* request,
      v1::Session* response) override;
  grpc::ServerUnaryReactor* GetSession(grpc::CallbackServerContext* context,
                                       const v1::GetSessionRequest* request,
                                       v1::Session* response) override;
  grpc::ServerUnaryReactor* ListSessions(
      grpc::CallbackServerContext* context,
      const v1::ListSessionsRequest* request,
      v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* DeleteSession(
      grpc::CallbackServerContext* context,
      const v1::DeleteSessionRequest* request,
      v1::DeleteSessionResponse* response) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* Ingest(
      grpc::CallbackServerContext* context,
      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Recommend(grpc::CallbackServerContext* context,
                                      const v1::RecommendRequest* request,
                                      v1::RecommendResponse* response) override;
  grpc::ServerWriteReactor<v1::WatchPreferencesResponse>* WatchPreferences(
      grpc::CallbackServerContext* context,
      const v1::WatchPreferencesRequest* request) override;
  grpc::ServerWriteReactor<v1::WatchScansResponse>* WatchScans(
      grpc::CallbackServerContext* context,
      const v1::WatchScansRequest* request) override;
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* context,
                                      const v1::GetReportRequest* request,
                                      v1::Report* response) override;

  // StopIngestStreams ends every Ingest stream, open or yet to come, with
  // UNAVAILABLE and its summary (ingest_stream.h): the server is stopping.
  void StopIngestStreams();

 private:
  const PolicyRegistry& registry_;
  SessionManager& sessions_;
  SessionBuilder& builder_;
  const std::shared_ptr<const Topology> host_;
  const Limits limits_;
  StreamLimiter ingest_streams_;
  StreamLimiter watch_streams_;
  StreamLimiter scan_watch_streams_;
  IngestStreams open_ingest_streams_;
  std::atomic<uint64_t> watch_changes_dropped_{0};
  std::atomic<uint64_t> watch_scans_dropped_{0};
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SCHEDCACHE_SERVICE_H_
