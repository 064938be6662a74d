// How the CLI shows a Topology: a table for people, the protobuf JSON mapping
// of schedcache.v1.Topology for programs.
//
// Thread contract: thread-safe (pure functions).
#ifndef SCHEDCACHE_CLIENT_CLI_TOPOLOGY_OUTPUT_H_
#define SCHEDCACHE_CLIENT_CLI_TOPOLOGY_OUTPUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "topology/topology.h"

namespace schedcache::cli {

// TopologyTable is the source, the Summary() line, then one line per LLC:
// id, level, size, CPU count and the CPUs in list form ("0-7,192-199").
std::string TopologyTable(const Topology& topology);

// TopologyJson is the topology as schedcache.v1.Topology in the protobuf
// JSON mapping on one line (lowerCamelCase names, default values printed).
absl::StatusOr<std::string> TopologyJson(const Topology& topology);

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLIENT_CLI_TOPOLOGY_OUTPUT_H_
