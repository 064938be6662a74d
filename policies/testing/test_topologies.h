// Topologies and sample builders for policy tests, made from plain
// TopologySpecs (no hwloc), so any machine shape runs on a laptop.
//
// Thread contract: plain functions.
#ifndef SCHEDCACHE_POLICIES_TESTING_TEST_TOPOLOGIES_H_
#define SCHEDCACHE_POLICIES_TESTING_TEST_TOPOLOGIES_H_

#include <cstdint>
#include <memory>

#include "events/event.h"
#include "topology/topology.h"

namespace schedcache::test_support {

inline constexpr int64_t kLlcBytes32MiB = int64_t{32} << 20;

// GridShape is "nodes x LLCs per node x CPUs per LLC". CPUs are numbered
// LLC after LLC (LLC k holds CPUs k*cpus_per_llc...); with smt = 2 the
// siblings of a core are adjacent CPUs. One package per node.
struct GridShape {
  int nodes = 1;
  int llcs_per_node = 2;
  int cpus_per_llc = 4;
  int smt = 1;
  int64_t llc_bytes = kLlcBytes32MiB;
};
std::shared_ptr<const Topology> MakeGrid(const GridShape& shape);

// MakeEpyc384 is a 2-socket EPYC 9654 as the seed measured it: 2 packages
// (one NUMA node each) x 12 LLCs (CCDs) x 8 cores x SMT 2 = 384 CPUs, with
// Linux's numbering: CPU c and c + 192 are siblings; LLC k holds CPUs
// 8k..8k+7 and 192+8k..192+8k+7; 32 MiB per LLC.
std::shared_ptr<const Topology> MakeEpyc384();

// SampleAt is a sample: `tid` of `tgid` ran `delta_ns` on `cpu` up to `ts`.
Sample SampleAt(int64_t ts, int cpu, int32_t tgid, int32_t tid, int64_t delta_ns,
           bool tick, int32_t nr_threads = kUnchangedNrThreads);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_POLICIES_TESTING_TEST_TOPOLOGIES_H_
