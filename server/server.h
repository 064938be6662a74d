// Server: schedcached as a library. Start discovers the host topology,
// builds the policy registry (built-ins and plugins), creates the `default`
// session, and serves SchedCache plus gRPC health checking and reflection
// on every listen address (each Unix socket through a UnixSocketClaim):
// in full on `listen`, read-only (ReadOnlyService) on `read_only_listen`,
// each read-only address on a grpc::Server of its own so the listener a
// call came in on is known. TCP listeners use TLS when given. With
// `metrics_listen`, Prometheus metrics are served over HTTP there
// (MetricsCollector through a MetricsEndpoint). With a state directory,
// the sessions stored there are recreated at start, before the server
// listens, through CreateSession's own checks.
// Tests start one in-process on a temporary Unix socket or on 127.0.0.1
// port 0; main.cc adds flags and signals.
//
// Thread contract: thread-safe. Stop may be called from any thread, once or
// more; the destructor stops a running server.
#ifndef SCHEDCACHE_SERVER_SERVER_H_
#define SCHEDCACHE_SERVER_SERVER_H_

#include <grpcpp/server.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/service_defaults.h"
#include "policies/policy_registry.h"
#include "server/limits.h"
#include "server/listen_address.h"
#include "server/read_only_service.h"
#include "server/schedcache_service.h"
#include "server/session_builder.h"
#include "server/session_manager.h"
#include "server/state_dir.h"
#include "server/tls_credentials.h"
#include "server/unix_socket_claim.h"
#include "topology/topology.h"

namespace schedcache {

class MetricsEndpoint;

struct ServerOptions {
  // `--listen` values: "unix:PATH", "HOST:PORT", ":PORT" (loopback).
  std::vector<std::string> listen = {kDefaultServerAddress};
  // `--read_only_listen` values, same forms: only the reading RPCs.
  std::vector<std::string> read_only_listen;
  // TLS of every TCP listener; null: plain TCP (CheckTransportSecurity).
  // Start takes its credentials only: reloading it (and removing its
  // private copies) stays with the caller.
  std::shared_ptr<TlsCredentials> tls;
  // `--allow_insecure_tcp`: plain TCP on non-loopback addresses too.
  bool allow_insecure_tcp = false;
  // `--metrics_listen` (ParseMetricsAddress); none: no metrics.
  std::optional<ListenAddress> metrics_listen;
  // Mode and group of every Unix socket.
  SocketAccess socket_access;
  // Topology source of the `default` session (topology_source.h); "host"
  // is the discovered host topology.
  std::string default_topology = "host";
  // Policies of the `default` session, reference first.
  std::vector<std::string> default_policies = {"full-scan", "visited-scan",
                                               "none"};
  // .so policy plugins to load, in order.
  std::vector<std::string> policy_plugins;
  Limits limits;
  // Builds the topologies of CreateSession's sessions, on the session
  // builder's threads. Empty: LoadSessionTopology bounded by
  // limits.max_topology_cpus. A seam for tests, which hold a build back to
  // watch the server meanwhile.
  SessionTopologyLoader session_topology_loader;
  // The clock CreateSession's deadlines are compared with. A seam for
  // tests, which move it past a deadline instead of sleeping.
  std::shared_ptr<const Clock> clock = Clock::Real();
  // `--state_dir`: where named sessions' definitions are stored, to be
  // recreated at the next start. Null: sessions last as long as the
  // process.
  std::shared_ptr<const StateDir> state_dir;
};

class Server {
 public:
  // Start brings the server up. Errors: InvalidArgument for a bad listen
  // address, topology or policy; AlreadyExists when another server owns a
  // socket path; Unavailable when an address cannot be bound; a plugin's
  // load error.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options);

  // CheckTransportSecurity refuses (InvalidArgument, naming the address
  // and --allow_insecure_tcp) a TCP listen address off loopback without
  // TLS, unless allowed, and InvalidArgument for an unparsable address.
  // Start checks it too; main.cc calls it first to exit 2.
  static absl::Status CheckTransportSecurity(const ServerOptions& options);

  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // addresses lists where the server listens, as client URIs ("unix:PATH",
  // "127.0.0.1:PORT" with port 0 resolved), in --listen order.
  const std::vector<std::string>& addresses() const { return addresses_; }
  // read_only_addresses: the same for `read_only_listen`.
  const std::vector<std::string>& read_only_addresses() const {
    return read_only_addresses_;
  }
  // metrics_address is where metrics are served ("HOST:PORT", port 0
  // resolved; path /metrics), empty without `metrics_listen`.
  const std::string& metrics_address() const { return metrics_address_; }
  const Topology& host_topology() const { return *host_; }
  const Topology& default_topology() const { return *default_topology_; }

  // Stop sets health to NOT_SERVING, answers pending CreateSession calls
  // UNAVAILABLE at once (without waiting for a build in progress), keeps
  // serving everything else (health answering NOT_SERVING) for half of
  // `grace`, at most 2 s, then ends every session's watch streams and
  // every Ingest stream (UNAVAILABLE, with its summary in the trailers),
  // refuses new calls, lets calls in flight finish until `grace` is over,
  // cancels the rest, removes the server's socket files, and stops serving
  // metrics (so a scrape during the drain still answers). Returns how many
  // session builds are left running on their threads; a process that
  // exits then should not run static destructors under them (main.cc).
  // Later calls return 0.
  int Stop(absl::Duration grace) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Server() = default;

  // Listen starts one gRPC server serving `service` on `listen`, claiming
  // each Unix socket, and returns the addresses as client URIs.
  absl::StatusOr<std::vector<std::string>> Listen(
      grpc::Service* service, const std::vector<ListenAddress>& listen,
      const ServerOptions& options);
  // ListenReadOnly starts a ReadOnlyService server on each address.
  absl::Status ListenReadOnly(const std::vector<ListenAddress>& listen,
                              const ServerOptions& options);

  std::shared_ptr<const Topology> host_;
  std::shared_ptr<const Topology> default_topology_;
  // Shared with the session builder's threads, which may outlive Stop.
  std::shared_ptr<const PolicyRegistry> registry_;
  std::shared_ptr<SessionManager> sessions_;
  std::unique_ptr<SessionBuilder> builder_;
  std::unique_ptr<SchedCacheService> service_;
  // The TCP listeners' credentials (TlsCredentials::server_credentials);
  // null: plain TCP.
  std::shared_ptr<grpc::ServerCredentials> tls_;
  std::vector<std::unique_ptr<ReadOnlyService>> read_only_services_;
  std::vector<std::unique_ptr<UnixSocketClaim>> socket_claims_;
  // The full server first, then one per read-only address.
  std::vector<std::unique_ptr<grpc::Server>> grpc_servers_;
  std::vector<std::string> addresses_;
  std::vector<std::string> read_only_addresses_;
  // Declared after everything its collector reads, so it stops (waiting
  // for a scrape in progress) before they go; Stop ends it last.
  std::unique_ptr<MetricsEndpoint> metrics_;
  std::string metrics_address_;

  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SERVER_H_
