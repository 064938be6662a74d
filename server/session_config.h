// Session configuration: turns a CreateSessionRequest into what Session
// needs (a topology, policy choices, engine options), validating every
// field before any engine is built. Messages name the field and value.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_SERVER_SESSION_CONFIG_H_
#define SCHEDCACHE_SERVER_SESSION_CONFIG_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policies/policy_registry.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/session.h"
#include "topology/topology.h"

namespace schedcache {

// ValidateSessionName accepts 1 to 64 characters of [A-Za-z0-9_.-].
absl::Status ValidateSessionName(absl::string_view name);

// BuildSessionSettings validates the request's name, policies, tunables
// (see TunableSetting in the .proto for how names resolve) and trigger.
// `max_processes` is the server's --max_processes. Returns InvalidArgument
// naming the field: a bad name, no policies, an unknown policy, an unknown
// tunable, or a value that does not parse or lies outside its range.
absl::StatusOr<SessionSettings> BuildSessionSettings(
    const v1::CreateSessionRequest& request, const PolicyRegistry& registry,
    int64_t max_processes);

// LoadSessionTopology builds the topology named by `source`; "host" (or no
// source) returns `host` itself.
absl::StatusOr<std::shared_ptr<const Topology>> LoadSessionTopology(
    const v1::TopologySource& source, std::shared_ptr<const Topology> host);

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SESSION_CONFIG_H_
