// How the CLI shows a topology, whether read here or asked of a server: a
// table for people (here), the JSON of schedcache.v1.Topology for programs
// (PrintJson, service_verb_support.h). Both work on the API message, so `schedcache topology` prints
// the same bytes for a topology read locally and for the same topology
// returned by GetTopology.
//
// Thread contract: thread-safe (pure functions).
#ifndef SCHEDCACHE_CLI_TOPOLOGY_OUTPUT_H_
#define SCHEDCACHE_CLI_TOPOLOGY_OUTPUT_H_

#include <string>

#include "schedcache/v1/schedcache.pb.h"
#include "topology/topology.h"

namespace schedcache::cli {

// DescribeTopology is what GetTopology answers for `topology`.
v1::GetTopologyResponse DescribeTopology(const Topology& topology);

// TopologyTable is the source, the summary line, then one line per LLC:
// id, level, size, CPU count and the CPUs in list form ("0-7,192-199").
std::string TopologyTable(const v1::GetTopologyResponse& described);

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_TOPOLOGY_OUTPUT_H_
