// Session configuration: turns a CreateSessionRequest into what a session
// needs (a topology, policy choices, engine options), validating every
// field before any engine is built. Messages name the field and value.
// Its own library (schedcache::session_config), apart from the server,
// because the server's sessions and eval's in-process sessions both build
// their engines from it; it keeps protobuf out of schedcache::policies.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_POLICIES_SESSION_CONFIG_H_
#define SCHEDCACHE_POLICIES_SESSION_CONFIG_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policies/engine.h"
#include "policies/policy_registry.h"
#include "schedcache/v1/schedcache.pb.h"
#include "topology/topology.h"

namespace schedcache {

// SessionSettings is what a session was created with, for GetSession.
struct SessionSettings {
  std::string name;
  std::vector<PolicyChoice> policies;
  EngineOptions options;
};

// ScanTriggerFromProto maps UNSPECIFIED to kTick.
ScanTrigger ScanTriggerFromProto(v1::ScanTrigger trigger);
v1::ScanTrigger ScanTriggerToProto(ScanTrigger trigger);

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

// CheckTopologySource checks what can be checked of `source` without
// building it: the spec's form, the lengths of the spec and of xml_name
// (they become the topology's name, repeated in its messages), and the
// synthetic description's CPU count against `max_cpus` (the server's
// --max_topology_cpus). Returns InvalidArgument naming the field.
absl::Status CheckTopologySource(const v1::TopologySource& source,
                                 int64_t max_cpus);

// LoadSessionTopology builds the topology named by `source`, bounded by
// `max_cpus`; "host" (or no source) returns `host` itself. It may take
// seconds (hwloc): never call it on a gRPC callback thread.
// REQUIRES: CheckTopologySource(source, max_cpus) is OK.
absl::StatusOr<std::shared_ptr<const Topology>> LoadSessionTopology(
    const v1::TopologySource& source, std::shared_ptr<const Topology> host,
    int64_t max_cpus);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_SESSION_CONFIG_H_
