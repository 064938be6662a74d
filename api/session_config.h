// Session configuration from the wire: a CreateSessionRequest turned into
// what a session needs (a topology, the engine's settings), every field
// checked before any engine is built. Messages name the field and value.
// The name resolution and checks of policies and tunables are the engine's
// own (policies/session_settings.h), which in-process runs call directly.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_API_SESSION_CONFIG_H_
#define SCHEDCACHE_API_SESSION_CONFIG_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policies/engine.h"
#include "policies/policy_registry.h"
#include "policies/session_settings.h"
#include "schedcache/v1/schedcache.pb.h"
#include "topology/topology.h"

namespace schedcache {

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

#endif  // SCHEDCACHE_API_SESSION_CONFIG_H_
