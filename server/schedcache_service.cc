#include "server/schedcache_service.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/proto_convert.h"
#include "api/session_config.h"
#include "api/topology_proto.h"
#include "common/grpc_status.h"
#include "server/ingest_stream.h"
#include "server/watch_stream.h"

namespace schedcache {
namespace {

// Respond finishes a unary call with `status`.
grpc::ServerUnaryReactor* Respond(grpc::CallbackServerContext* context,
                                  const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Unwrap moves an OK value into `response`, returning the status.
template <typename T>
absl::Status Unwrap(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return result.status();
  *response = *std::move(result);
  return absl::OkStatus();
}

}  // namespace

SchedCacheService::SchedCacheService(const PolicyRegistry& registry,
                                     SessionManager& sessions,
                                     SessionBuilder& builder,
                                     std::shared_ptr<const Topology> host,
                                     const Limits& limits)
    : registry_(registry),
      sessions_(sessions),
      builder_(builder),
      host_(std::move(host)),
      limits_(limits),
      ingest_streams_(limits.max_streams, "Ingest", "--max_streams"),
      watch_streams_(limits.max_watch_streams, "WatchPreferences",
                     "--max_watch_streams"),
      scan_watch_streams_(limits.max_watch_streams, "WatchScans",
                          "--max_watch_streams") {}

SchedCacheService::StreamStats SchedCacheService::Streams() const {
  return StreamStats{ingest_streams_.open(), watch_streams_.open(),
                     scan_watch_streams_.open(),
                     watch_changes_dropped_.load(std::memory_order_relaxed),
                     watch_scans_dropped_.load(std::memory_order_relaxed)};
}

grpc::ServerUnaryReactor* SchedCacheService::GetTopology(
    grpc::CallbackServerContext* context, const v1::GetTopologyRequest* request,
    v1::GetTopologyResponse* response) {
  const auto describe = [&](const Topology& topology) {
    *response->mutable_topology() = TopologyToProto(topology);
    response->set_summary(topology.Summary());
  };
  if (request->session().empty()) {
    describe(*host_);
    return Respond(context, absl::OkStatus());
  }
  absl::StatusOr<std::shared_ptr<Session>> session =
      sessions_.Find(request->session());
  if (session.ok()) describe((*session)->topology());
  return Respond(context, session.status());
}

grpc::ServerUnaryReactor* SchedCacheService::ListPolicies(
    grpc::CallbackServerContext* context, const v1::ListPoliciesRequest*,
    v1::ListPoliciesResponse* response) {
  for (const PolicyFactory* factory : registry_.factories()) {
    v1::PolicyInfo* info = response->add_policies();
    info->set_name(std::string(factory->name()));
    info->set_description(std::string(factory->description()));
    for (const TunableSpec& spec : factory->tunables()) {
      *info->add_tunables() = TunableToProto(spec);
    }
  }
  for (const TunableSpec& spec : ModelTunables::Specs()) {
    *response->add_model_tunables() = TunableToProto(spec);
  }
  return Respond(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* SchedCacheService::CreateSession(
    grpc::CallbackServerContext* context,
    const v1::CreateSessionRequest* request, v1::Session* response) {
  // Only what is quick happens here; the build runs on the builder's
  // workers.
  absl::StatusOr<SessionSettings> settings =
      BuildSessionSettings(*request, registry_, limits_.max_processes);
  if (!settings.ok()) return Respond(context, settings.status());
  if (absl::Status source =
          CheckTopologySource(request->topology(), limits_.max_topology_cpus);
      !source.ok()) {
    return Respond(context, source);
  }
  return builder_.Start(*context, *std::move(settings), *request, response);
}

grpc::ServerUnaryReactor* SchedCacheService::GetSession(
    grpc::CallbackServerContext* context, const v1::GetSessionRequest* request,
    v1::Session* response) {
  absl::StatusOr<std::shared_ptr<Session>> session =
      sessions_.Find(request->session());
  if (session.ok()) *response = (*session)->Describe();
  return Respond(context, session.status());
}

grpc::ServerUnaryReactor* SchedCacheService::ListSessions(
    grpc::CallbackServerContext* context, const v1::ListSessionsRequest*,
    v1::ListSessionsResponse* response) {
  for (const std::shared_ptr<Session>& session : sessions_.List()) {
    *response->add_sessions() = session->Describe();
  }
  return Respond(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* SchedCacheService::DeleteSession(
    grpc::CallbackServerContext* context,
    const v1::DeleteSessionRequest* request, v1::DeleteSessionResponse*) {
  if (request->session().empty()) {
    return Respond(context, absl::InvalidArgumentError(
                                "session: the name of the session to delete "
                                "is required"));
  }
  return Respond(context, sessions_.Delete(request->session()));
}

grpc::ServerReadReactor<grpc::ByteBuffer>* SchedCacheService::Ingest(
    grpc::CallbackServerContext* context, grpc::ByteBuffer* response) {
  return new IngestStream(sessions_, ingest_streams_, open_ingest_streams_,
                          limits_, *context, response);
}

void SchedCacheService::StopIngestStreams() {
  open_ingest_streams_.StopAll(absl::UnavailableError("the server is stopping"));
}

grpc::ServerUnaryReactor* SchedCacheService::Recommend(
    grpc::CallbackServerContext* context, const v1::RecommendRequest* request,
    v1::RecommendResponse* response) {
  absl::StatusOr<RecommendRequest> query = RecommendFromProto(*request);
  if (!query.ok()) return Respond(context, query.status());
  absl::StatusOr<std::shared_ptr<Session>> session =
      sessions_.Find(request->session());
  if (!session.ok()) return Respond(context, session.status());
  return Respond(context, Unwrap((*session)->Recommend(*query), response));
}

grpc::ServerWriteReactor<v1::WatchPreferencesResponse>*
SchedCacheService::WatchPreferences(
    grpc::CallbackServerContext* context,
    const v1::WatchPreferencesRequest* request) {
  return WatchStream::Start(sessions_, watch_streams_, watch_changes_dropped_,
                            limits_, *context, *request);
}

grpc::ServerWriteReactor<v1::WatchScansResponse>*
SchedCacheService::WatchScans(grpc::CallbackServerContext* context,
                              const v1::WatchScansRequest* request) {
  return ScanWatchStream::Start(sessions_, scan_watch_streams_,
                                watch_scans_dropped_, limits_, *context,
                                *request);
}

grpc::ServerUnaryReactor* SchedCacheService::GetReport(
    grpc::CallbackServerContext* context, const v1::GetReportRequest* request,
    v1::Report* response) {
  absl::StatusOr<std::shared_ptr<Session>> session =
      sessions_.Find(request->session());
  if (session.ok()) *response = (*session)->Report();
  return Respond(context, session.status());
}

}  // namespace schedcache
