// ReadOnlyService: schedcache.v1.SchedCache as a `--read_only_listen`
// listener serves it. The reading RPCs (GetTopology, ListPolicies,
// GetSession, ListSessions, Recommend without `scan`, WatchPreferences,
// WatchScans, GetReport) go to the full service, so both see the same
// sessions; the rest (CreateSession, DeleteSession, Ingest, Recommend with
// `scan`, which changes the model) end PERMISSION_DENIED naming the
// listener.
//
// The access level belongs to the grpc::Server a listener is on (Server
// runs one per read-only address), not to anything the peer says or a
// compare on its address.
//
// Thread contract: thread-safe; `full` must outlive it.
#ifndef SCHEDCACHE_SERVER_READ_ONLY_SERVICE_H_
#define SCHEDCACHE_SERVER_READ_ONLY_SERVICE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "server/schedcache_service.h"

namespace schedcache {

class ReadOnlyService final : public v1::SchedCache::CallbackService {
 public:
  // `listener` names the listener in refusals until set_listener.
  ReadOnlyService(SchedCacheService& full, std::string listener);

  // set_listener renames the listener once its port 0 is resolved.
  void set_listener(std::string listener) ABSL_LOCKS_EXCLUDED(mu_);

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
      const v1::CreateSessionRequest* request, v1::Session* response) override;
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
  grpc::ServerReadReactor<v1::IngestBatch>* Ingest(
      grpc::CallbackServerContext* context,
      v1::IngestSummary* response) override;
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

 private:
  // Refusal is the PERMISSION_DENIED status for `what` on this listener.
  grpc::Status Refusal(absl::string_view what) const ABSL_LOCKS_EXCLUDED(mu_);
  // Deny finishes a unary call with Refusal(what).
  grpc::ServerUnaryReactor* Deny(grpc::CallbackServerContext* context,
                                 absl::string_view what) const;

  SchedCacheService& full_;
  mutable absl::Mutex mu_;
  std::string listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_READ_ONLY_SERVICE_H_
