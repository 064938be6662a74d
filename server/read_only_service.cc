#include "server/read_only_service.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

// DeniedIngest ends an Ingest stream at once, before reading a batch.
class DeniedIngest final : public grpc::ServerReadReactor<v1::IngestBatch> {
 public:
  explicit DeniedIngest(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

ReadOnlyService::ReadOnlyService(SchedCacheService& full, std::string listener)
    : full_(full), listener_(std::move(listener)) {}

void ReadOnlyService::set_listener(std::string listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

grpc::Status ReadOnlyService::Refusal(absl::string_view what) const {
  absl::MutexLock lock(&mu_);
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat(what, " is not served on the read-only listener ", listener_,
                   " (--read_only_listen); use a --listen address"));
}

grpc::ServerUnaryReactor* ReadOnlyService::Deny(
    grpc::CallbackServerContext* context, absl::string_view what) const {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(Refusal(what));
  return reactor;
}

grpc::ServerUnaryReactor* ReadOnlyService::GetTopology(
    grpc::CallbackServerContext* context, const v1::GetTopologyRequest* request,
    v1::GetTopologyResponse* response) {
  return full_.GetTopology(context, request, response);
}

grpc::ServerUnaryReactor* ReadOnlyService::ListPolicies(
    grpc::CallbackServerContext* context,
    const v1::ListPoliciesRequest* request,
    v1::ListPoliciesResponse* response) {
  return full_.ListPolicies(context, request, response);
}

grpc::ServerUnaryReactor* ReadOnlyService::CreateSession(
    grpc::CallbackServerContext* context, const v1::CreateSessionRequest*,
    v1::Session*) {
  return Deny(context, "CreateSession");
}

grpc::ServerUnaryReactor* ReadOnlyService::GetSession(
    grpc::CallbackServerContext* context, const v1::GetSessionRequest* request,
    v1::Session* response) {
  return full_.GetSession(context, request, response);
}

grpc::ServerUnaryReactor* ReadOnlyService::ListSessions(
    grpc::CallbackServerContext* context,
    const v1::ListSessionsRequest* request,
    v1::ListSessionsResponse* response) {
  return full_.ListSessions(context, request, response);
}

grpc::ServerUnaryReactor* ReadOnlyService::DeleteSession(
    grpc::CallbackServerContext* context, const v1::DeleteSessionRequest*,
    v1::DeleteSessionResponse*) {
  return Deny(context, "DeleteSession");
}

grpc::ServerReadReactor<v1::IngestBatch>* ReadOnlyService::Ingest(
    grpc::CallbackServerContext*, v1::IngestSummary*) {
  return new DeniedIngest(Refusal("Ingest"));
}

grpc::ServerUnaryReactor* ReadOnlyService::Recommend(
    grpc::CallbackServerContext* context, const v1::RecommendRequest* request,
    v1::RecommendResponse* response) {
  if (request->scan()) return Deny(context, "Recommend with scan");
  return full_.Recommend(context, request, response);
}

grpc::ServerWriteReactor<v1::WatchPreferencesResponse>*
ReadOnlyService::WatchPreferences(grpc::CallbackServerContext* context,
                                  const v1::WatchPreferencesRequest* request) {
  return full_.WatchPreferences(context, request);
}

grpc::ServerWriteReactor<v1::WatchScansResponse>* ReadOnlyService::WatchScans(
    grpc::CallbackServerContext* context,
    const v1::WatchScansRequest* request) {
  return full_.WatchScans(context, request);
}

grpc::ServerUnaryReactor* ReadOnlyService::GetReport(
    grpc::CallbackServerContext* context, const v1::GetReportRequest* request,
    v1::Report* response) {
  return full_.GetReport(context, request, response);
}

}  // namespace schedcache
