// SessionBuilder: builds the sessions CreateSession asks for, off gRPC's
// callback threads. Building a topology (hwloc) and an engine can take
// seconds, and a handler that built inline would hold a callback thread the
// whole time: two large creations were enough to freeze every other RPC and
// to delay shutdown by as long. Here the handler only validates, reserves
// the name and queues the build; one of a few worker threads builds, then
// completes the call.
//
// Bounds: at most `workers` builds run at once; the queue holds at most
// --max_sessions creations, because each one reserves its name and a slot
// in the SessionManager when it arrives.
//
// A creation is answered once, by whoever comes first: the worker (the
// session, or the build's error), gRPC's OnCancel (the client cancelled, or
// its deadline passed: CANCELLED), the worker finding the deadline passed
// before or after building (DEADLINE_EXCEEDED), or Stop (UNAVAILABLE). A
// creation answered before its session was registered never registers it:
// a build in progress runs to its end and is thrown away.
//
// Thread contract: thread-safe. The worker threads share ownership of the
// registry, the manager, the loader and the clock, so they may outlive the
// builder: Stop does not wait for a build, because hwloc cannot be
// interrupted.
#ifndef SCHEDCACHE_SERVER_SESSION_BUILDER_H_
#define SCHEDCACHE_SERVER_SESSION_BUILDER_H_

#include <functional>
#include <memory>

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "policies/policy_registry.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/session.h"
#include "server/session_manager.h"
#include "topology/topology.h"

namespace schedcache {

// SessionTopologyLoader builds a session's topology from its request's
// source; it runs on a worker thread and may take seconds.
using SessionTopologyLoader =
    std::function<absl::StatusOr<std::shared_ptr<const Topology>>(
        const v1::TopologySource& source)>;

class SessionBuilder {
 public:
  // SessionBuilder starts `workers` (>= 1) threads. Its sessions retain
  // `watch_history` changes each (Session::Create). A creation's deadline
  // is compared with `clock`'s time; the worker threads share it.
  SessionBuilder(std::shared_ptr<const PolicyRegistry> registry,
                 std::shared_ptr<SessionManager> sessions,
                 SessionTopologyLoader load_topology, int watch_history,
                 int workers, std::shared_ptr<const Clock> clock);
  ~SessionBuilder();  // Stop()
  SessionBuilder(const SessionBuilder&) = delete;
  SessionBuilder& operator=(const SessionBuilder&) = delete;

  // Start begins one CreateSession call and returns its reactor, which gRPC
  // owns and the builder finishes (see above); on success `response` holds
  // the session's description, and `definition` (the request, topology
  // source included) was handed to SessionManager::Add to be stored. The
  // name's reservation is taken here, so a taken name or the session limit
  // is answered at once. REQUIRES: `settings`, read from `definition`, and
  // its topology source passed validation (session_config.h).
  grpc::ServerUnaryReactor* Start(const grpc::CallbackServerContext& context,
                                  SessionSettings settings,
                                  v1::CreateSessionRequest definition,
                                  v1::Session* response);

  // Stop answers every creation not yet answered with UNAVAILABLE and tells
  // the workers to end, without waiting for them. Returns how many builds
  // were still running (each finishes on its thread, then is discarded).
  // Later calls return 0.
  int Stop();

 private:
  class Creation;
  class Reactor;
  struct Shared;

  static void Work(std::shared_ptr<Shared> shared);
  static void Build(Shared& shared, Creation& creation);

  const std::shared_ptr<Shared> shared_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SESSION_BUILDER_H_
