#include "server/server.h"

#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "policies/session_config.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

// kSessionBuildThreads: sessions built at once. Builds are CPU-bound; more
// threads than this would only slow the ingest they compete with.
constexpr int kSessionBuildThreads = 2;

absl::StatusOr<std::shared_ptr<const Topology>> Load(absl::string_view source,
                                                     int64_t max_cpus) {
  TopologyLimits limits;
  limits.max_cpus = max_cpus;
  limits.how_to_raise = "flag --max_topology_cpus";
  ASSIGN_OR_RETURN(Topology topology, LoadTopology(source, limits));
  return std::make_shared<const Topology>(std::move(topology));
}

// AddDefaultSession creates the `default` session on the start-up thread.
absl::Status AddDefaultSession(const ServerOptions& options,
                               const PolicyRegistry& registry,
                               std::shared_ptr<const Topology> topology,
                               SessionManager& sessions) {
  v1::CreateSessionRequest request;
  request.set_name(kDefaultSessionName);
  for (const std::string& policy : options.default_policies) {
    request.add_policies(policy);
  }
  ASSIGN_OR_RETURN(
      SessionSettings settings,
      BuildSessionSettings(request, registry, options.limits.max_processes));
  RETURN_IF_ERROR(sessions.Reserve(settings.name));
  absl::StatusOr<std::shared_ptr<Session>> session =
      Session::Create(std::move(settings), std::move(topology), registry);
  if (!session.ok()) {
    sessions.Release(kDefaultSessionName);
    return session.status();
  }
  return sessions.Add(*std::move(session));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  std::vector<ListenAddress> listen;
  for (const std::string& text : options.listen) {
    ASSIGN_OR_RETURN(listen.emplace_back(), ParseListenAddress(text));
  }
  if (listen.empty()) {
    return absl::InvalidArgumentError("no listen address given");
  }

  std::unique_ptr<Server> server(new Server());
  const int64_t max_cpus = options.limits.max_topology_cpus;
  ASSIGN_OR_RETURN(server->host_, Load(kHostSource, max_cpus));
  if (options.default_topology == kHostSource) {
    server->default_topology_ = server->host_;
  } else {
    ASSIGN_OR_RETURN(server->default_topology_,
                     Load(options.default_topology, max_cpus));
  }
  ASSIGN_OR_RETURN(PolicyRegistry registry,
                   BuildPolicyRegistry(options.policy_plugins));
  server->registry_ =
      std::make_shared<const PolicyRegistry>(std::move(registry));
  server->sessions_ =
      std::make_shared<SessionManager>(options.limits.max_sessions);
  RETURN_IF_ERROR(AddDefaultSession(options, *server->registry_,
                                    server->default_topology_,
                                    *server->sessions_));

  SessionTopologyLoader loader = std::move(options.session_topology_loader);
  if (!loader) {
    loader = [host = server->host_,
              max_cpus](const v1::TopologySource& source) {
      return LoadSessionTopology(source, host, max_cpus);
    };
  }
  server->builder_ =
      std::make_unique<SessionBuilder>(server->registry_, server->sessions_,
                                       std::move(loader), kSessionBuildThreads);
  server->service_ = std::make_unique<SchedCacheService>(
      *server->registry_, *server->sessions_, *server->builder_, server->host_,
      options.limits);
  RETURN_IF_ERROR(server->Listen(listen, options.limits.max_message_bytes));
  return server;
}

absl::Status Server::Listen(const std::vector<ListenAddress>& listen,
                            int max_message_bytes) {
  // Both are process-wide switches that take effect for servers built
  // afterwards.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  std::vector<int> ports(listen.size(), 0);
  std::vector<std::string> uris;
  for (size_t i = 0; i < listen.size(); ++i) {
    std::string uri = listen[i].ToGrpcUri();
    if (listen[i].kind == ListenAddress::Kind::kUnix) {
      ASSIGN_OR_RETURN(std::unique_ptr<UnixSocketClaim> claim,
                       UnixSocketClaim::Claim(listen[i].path));
      uri = absl::StrCat("unix:", claim->bind_path());
      socket_claims_.push_back(std::move(claim));
    }
    builder.AddListeningPort(uri, grpc::InsecureServerCredentials(), &ports[i]);
    uris.push_back(listen[i].ToGrpcUri());
  }
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", absl::StrJoin(uris, ", "),
                     " (address in use, or no permission?)"));
  }
  for (const std::unique_ptr<UnixSocketClaim>& claim : socket_claims_) {
    RETURN_IF_ERROR(claim->Publish());
  }
  for (size_t i = 0; i < listen.size(); ++i) {
    addresses_.push_back(listen[i].kind == ListenAddress::Kind::kUnix
                             ? uris[i]
                             : listen[i].WithPort(ports[i]).ToGrpcUri());
  }
  return absl::OkStatus();
}

int Server::Stop(absl::Duration grace) {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return 0;
    stopped_ = true;
  }
  // Pending creations are answered first, so the drain below never waits
  // for a build; then the watch streams end cleanly (OK), and gRPC drains
  // the rest: a batch being applied completes; idle Ingest streams are
  // cancelled at the deadline.
  const int builds_running = builder_->Stop();
  sessions_->CloseAll();
  grpc_server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  grpc_server_->Wait();
  for (const std::unique_ptr<UnixSocketClaim>& claim : socket_claims_) {
    claim->Release();
  }
  return builds_running;
}

Server::~Server() {
  if (grpc_server_ != nullptr) Stop(absl::ZeroDuration());
}

}  // namespace schedcache
