#include "server/server.h"

#include <unistd.h>

#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "server/session_config.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

absl::StatusOr<std::shared_ptr<const Topology>> Load(absl::string_view source) {
  ASSIGN_OR_RETURN(Topology topology, LoadTopology(source));
  return std::make_shared<const Topology>(std::move(topology));
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
  ASSIGN_OR_RETURN(server->host_, Load(kHostSource));
  if (options.default_topology == kHostSource) {
    server->default_topology_ = server->host_;
  } else {
    ASSIGN_OR_RETURN(server->default_topology_,
                     Load(options.default_topology));
  }
  ASSIGN_OR_RETURN(PolicyRegistry registry,
                   BuildPolicyRegistry(options.policy_plugins));
  server->registry_ = std::make_unique<PolicyRegistry>(std::move(registry));
  server->sessions_ = std::make_unique<SessionManager>(
      *server->registry_, options.limits.max_sessions);

  v1::CreateSessionRequest default_request;
  default_request.set_name(kDefaultSessionName);
  for (const std::string& policy : options.default_policies) {
    default_request.add_policies(policy);
  }
  ASSIGN_OR_RETURN(SessionSettings settings,
                   BuildSessionSettings(default_request, *server->registry_,
                                        options.limits.max_processes));
  RETURN_IF_ERROR(
      server->sessions_->Create(std::move(settings), server->default_topology_)
          .status());

  server->service_ = std::make_unique<SchedCacheService>(
      *server->registry_, *server->sessions_, server->host_, options.limits);

  // Both are process-wide switches that take effect for servers built
  // afterwards.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.RegisterService(server->service_.get());
  builder.SetMaxReceiveMessageSize(options.limits.max_message_bytes);
  std::vector<int> ports(listen.size(), 0);
  for (size_t i = 0; i < listen.size(); ++i) {
    if (listen[i].kind == ListenAddress::Kind::kUnix) {
      RETURN_IF_ERROR(PrepareUnixSocket(listen[i].path));
    }
    builder.AddListeningPort(listen[i].ToGrpcUri(),
                             grpc::InsecureServerCredentials(), &ports[i]);
  }
  server->grpc_server_ = builder.BuildAndStart();
  if (server->grpc_server_ == nullptr) {
    std::vector<std::string> uris;
    for (const ListenAddress& address : listen) {
      uris.push_back(address.ToGrpcUri());
    }
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", absl::StrJoin(uris, ", "),
        " (address in use, or no permission?)"));
  }
  for (size_t i = 0; i < listen.size(); ++i) {
    if (listen[i].kind == ListenAddress::Kind::kUnix) {
      server->socket_paths_.push_back(listen[i].path);
      server->addresses_.push_back(listen[i].ToGrpcUri());
      RETURN_IF_ERROR(RestrictUnixSocket(listen[i].path));
    } else {
      server->addresses_.push_back(listen[i].WithPort(ports[i]).ToGrpcUri());
    }
  }
  return server;
}

void Server::Stop(absl::Duration grace) {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  // First end the watch streams cleanly (OK), then let gRPC drain the rest:
  // a batch being applied completes; idle Ingest streams are cancelled at
  // the deadline.
  sessions_->CloseAll();
  grpc_server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  grpc_server_->Wait();
  for (const std::string& path : socket_paths_) ::unlink(path.c_str());
}

Server::~Server() {
  if (grpc_server_ != nullptr) Stop(absl::ZeroDuration());
}

}  // namespace schedcache
