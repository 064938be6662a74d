// TopologyToProto: the one conversion from the Topology value to the
// schedcache.v1.Topology message (proto/schedcache/v1/topology.proto). It is
// its own library, schedcache::topology_proto, so that schedcache::topology
// does not depend on protobuf.
//
// Thread contract: thread-safe (a pure function of its argument).
#ifndef SCHEDCACHE_API_TOPOLOGY_PROTO_H_
#define SCHEDCACHE_API_TOPOLOGY_PROTO_H_

#include "schedcache/v1/topology.pb.h"
#include "topology/topology.h"

namespace schedcache {

// TopologyToProto describes `topology` as the API message: every field of
// schedcache.v1.Topology is filled, CPU lists in increasing order.
v1::Topology TopologyToProto(const Topology& topology);

}  // namespace schedcache

#endif  // SCHEDCACHE_API_TOPOLOGY_PROTO_H_
