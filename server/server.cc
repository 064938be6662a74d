#include "server/server.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "api/session_config.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "server/metrics_collector.h"
#include "server/metrics_endpoint.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

// kSessionBuildThreads: sessions built at once. Builds are CPU-bound; more
// threads than this would only slow the ingest they compete with.
constexpr int kSessionBuildThreads = 2;

// kMaxHealthDrainWindow bounds how long Stop keeps serving, health reading
// NOT_SERVING, before it refuses new calls: half the grace, at most this.
constexpr absl::Duration kMaxHealthDrainWindow = absl::Seconds(2);

absl::StatusOr<std::shared_ptr<const Topology>> Load(absl::string_view source,
                                                     int64_t max_cpus) {
  TopologyLimits limits;
  limits.max_cpus = max_cpus;
  limits.how_to_raise = "flag --max_topology_cpus";
  ASSIGN_OR_RETURN(Topology topology, LoadTopology(source, limits));
  return std::make_shared<const Topology>(std::move(topology));
}

// Register builds a session from `settings` on `topology`, keeping the
// last `limits.watch_history` changes, and adds it under its name;
// `definition`, when given, is stored (SessionManager::Add).
absl::Status Register(SessionSettings settings,
                      std::shared_ptr<const Topology> topology,
                      const PolicyRegistry& registry, const Limits& limits,
                      SessionManager& sessions,
                      const v1::CreateSessionRequest* definition) {
  const std::string name = settings.name;
  RETURN_IF_ERROR(sessions.Reserve(name));
  absl::StatusOr<std::shared_ptr<Session>> session =
      Session::Create(std::move(settings), std::move(topology), registry,
                      limits.watch_history);
  if (!session.ok()) {
    sessions.Release(name);
    return session.status();
  }
  return sessions.Add(*std::move(session), definition);
}

// AddDefaultSession creates the `default` session on the start-up thread.
// It is the host's, defined by flags: never stored.
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
  return Register(std::move(settings), std::move(topology), registry,
                  options.limits, sessions, /*definition=*/nullptr);
}

// Restore recreates one stored session with CreateSession's checks (on this
// thread: the server does not listen yet). Its file is already there, so
// it is not written again.
absl::Status Restore(const v1::CreateSessionRequest& definition,
                     const Limits& limits, const PolicyRegistry& registry,
                     const SessionTopologyLoader& load_topology,
                     SessionManager& sessions) {
  ASSIGN_OR_RETURN(
      SessionSettings settings,
      BuildSessionSettings(definition, registry, limits.max_processes));
  RETURN_IF_ERROR(
      CheckTopologySource(definition.topology(), limits.max_topology_cpus));
  ASSIGN_OR_RETURN(std::shared_ptr<const Topology> topology,
                   load_topology(definition.topology()));
  return Register(std::move(settings), std::move(topology), registry, limits,
                  sessions, /*definition=*/nullptr);
}

// RestoreSessions recreates every session stored in `state_dir`. A file
// that cannot be used is logged, naming it and why, and skipped: it never
// stops the server or the other sessions (and stays, for the operator).
void RestoreSessions(const StateDir& state_dir, const Limits& limits,
                     const PolicyRegistry& registry,
                     const SessionTopologyLoader& load_topology,
                     SessionManager& sessions) {
  for (const StateDir::StoredDefinition& stored : state_dir.Load()) {
    absl::Status restored = stored.definition.status();
    if (restored.ok()) {
      restored = Restore(*stored.definition, limits, registry, load_topology,
                         sessions);
    }
    if (restored.ok()) {
      std::cerr << "schedcached: restored session \""
                << stored.definition->name() << "\" from " << stored.file
                << "\n";
    } else {
      std::cerr << "schedcached: skipping stored session " << stored.file
                << ": " << restored << "\n";
    }
  }
}

}  // namespace

absl::Status Server::CheckTransportSecurity(const ServerOptions& options) {
  for (const std::vector<std::string>* list :
       {&options.listen, &options.read_only_listen}) {
    for (const std::string& text : *list) {
      ASSIGN_OR_RETURN(const ListenAddress address, ParseListenAddress(text));
      if (address.kind != ListenAddress::Kind::kTcp || address.IsLoopback() ||
          options.tls != nullptr || options.allow_insecure_tcp) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to listen on ", text,
          " without TLS: any host that reaches it could change or delete "
          "sessions; give --tls_cert_file and --tls_key_file, or "
          "--allow_insecure_tcp to serve it in the clear"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options) {
  RETURN_IF_ERROR(CheckTransportSecurity(options));
  std::vector<ListenAddress> listen;
  for (const std::string& text : options.listen) {
    ASSIGN_OR_RETURN(listen.emplace_back(), ParseListenAddress(text));
  }
  std::vector<ListenAddress> read_only_listen;
  for (const std::string& text : options.read_only_listen) {
    ASSIGN_OR_RETURN(read_only_listen.emplace_back(), ParseListenAddress(text));
  }
  if (listen.empty()) {
    return absl::InvalidArgumentError("no listen address given");
  }

  std::unique_ptr<Server> server(new Server());
  if (options.tls != nullptr) {
    server->tls_ = options.tls->server_credentials();
  }
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
  server->sessions_ = std::make_shared<SessionManager>(
      options.limits.max_sessions, options.state_dir);
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
  if (options.state_dir != nullptr) {
    RestoreSessions(*options.state_dir, options.limits, *server->registry_,
                    loader, *server->sessions_);
  }
  server->builder_ =
      std::make_unique<SessionBuilder>(server->registry_, server->sessions_,
                                       std::move(loader),
                                       options.limits.watch_history,
                                       kSessionBuildThreads, options.clock);
  server->service_ = std::make_unique<SchedCacheService>(
      *server->registry_, *server->sessions_, *server->builder_, server->host_,
      options.limits);
  if (options.metrics_listen.has_value()) {
    ASSIGN_OR_RETURN(server->metrics_,
                     MetricsEndpoint::Start(
                         *options.metrics_listen,
                         std::make_shared<MetricsCollector>(*server->sessions_,
                                                            *server->service_)));
    server->metrics_address_ = server->metrics_->address();
  }
  ASSIGN_OR_RETURN(server->addresses_,
                   server->Listen(server->service_.get(), listen, options));
  RETURN_IF_ERROR(server->ListenReadOnly(read_only_listen, options));
  return server;
}

absl::StatusOr<std::vector<std::string>> Server::Listen(
    grpc::Service* service, const std::vector<ListenAddress>& listen,
    const ServerOptions& options) {
  // Both are process-wide switches that take effect for servers built
  // afterwards.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  grpc::ServerBuilder builder;
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(options.limits.max_message_bytes);
  std::vector<int> ports(listen.size(), 0);
  std::vector<std::string> uris;
  std::vector<bool> plain_tcp(listen.size(), false);
  const size_t first_claim = socket_claims_.size();
  for (size_t i = 0; i < listen.size(); ++i) {
    std::string uri = listen[i].ToGrpcUri();
    std::shared_ptr<grpc::ServerCredentials> credentials =
        grpc::InsecureServerCredentials();
    if (listen[i].kind == ListenAddress::Kind::kUnix) {
      ASSIGN_OR_RETURN(
          std::unique_ptr<UnixSocketClaim> claim,
          UnixSocketClaim::Claim(listen[i].path, options.socket_access));
      uri = absl::StrCat("unix:", claim->bind_path());
      socket_claims_.push_back(std::move(claim));
    } else if (tls_ != nullptr) {
      credentials = tls_;
    } else {
      // Only loopback gets here unless --allow_insecure_tcp (Start checked).
      plain_tcp[i] = true;
    }
    builder.AddListeningPort(uri, credentials, &ports[i]);
    uris.push_back(listen[i].ToGrpcUri());
  }
  std::unique_ptr<grpc::Server> grpc_server = builder.BuildAndStart();
  if (grpc_server == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", absl::StrJoin(uris, ", "),
                     " (address in use, or no permission?)"));
  }
  for (const std::string& name :
       {std::string(), std::string(v1::SchedCache::service_full_name())}) {
    grpc_server->GetHealthCheckService()->SetServingStatus(name, true);
  }
  grpc_servers_.push_back(std::move(grpc_server));
  for (size_t i = first_claim; i < socket_claims_.size(); ++i) {
    RETURN_IF_ERROR(socket_claims_[i]->Publish());
  }
  std::vector<std::string> addresses;
  for (size_t i = 0; i < listen.size(); ++i) {
    addresses.push_back(listen[i].kind == ListenAddress::Kind::kUnix
                            ? uris[i]
                            : listen[i].WithPort(ports[i]).ToGrpcUri());
    if (plain_tcp[i]) {
      std::cerr << "schedcached: " << addresses.back()
                << " serves plain TCP (no TLS flags given)\n";
    }
  }
  return addresses;
}

absl::Status Server::ListenReadOnly(const std::vector<ListenAddress>& listen,
                                    const ServerOptions& options) {
  for (const ListenAddress& address : listen) {
    auto service =
        std::make_unique<ReadOnlyService>(*service_, address.ToGrpcUri());
    ASSIGN_OR_RETURN(std::vector<std::string> bound,
                     Listen(service.get(), {address}, options));
    service->set_listener(bound.front());
    read_only_addresses_.push_back(bound.front());
    read_only_services_.push_back(std::move(service));
  }
  return absl::OkStatus();
}

int Server::Stop(absl::Duration grace) {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return 0;
    stopped_ = true;
  }
  const absl::Time deadline = absl::Now() + grace;
  // Health says NOT_SERVING first, so a balancer stops sending new work,
  // and pending creations are answered, so the drain never waits for a
  // build. Then, for a short window, everything else is still served, so
  // a probe that comes now reads NOT_SERVING instead of failing to
  // connect. Then the watch streams end, the Ingest streams end with their
  // summaries (after the batch each is applying), and gRPC refuses new
  // calls and cancels what is left at the deadline.
  for (const std::unique_ptr<grpc::Server>& grpc_server : grpc_servers_) {
    grpc_server->GetHealthCheckService()->Shutdown();
  }
  const int builds_running = builder_->Stop();
  absl::SleepFor(std::min(grace / 2, kMaxHealthDrainWindow));
  sessions_->CloseAll();
  service_->StopIngestStreams();
  for (const std::unique_ptr<grpc::Server>& grpc_server : grpc_servers_) {
    grpc_server->Shutdown(absl::ToChronoTime(deadline));
  }
  for (const std::unique_ptr<grpc::Server>& grpc_server : grpc_servers_) {
    grpc_server->Wait();
  }
  for (const std::unique_ptr<UnixSocketClaim>& claim : socket_claims_) {
    claim->Release();
  }
  metrics_.reset();
  return builds_running;
}

Server::~Server() {
  if (!grpc_servers_.empty()) Stop(absl::ZeroDuration());
}

}  // namespace schedcache
