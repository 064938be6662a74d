// Topology: an immutable description of a machine's CPUs and caches, the
// only way the rest of schedcache learns about hardware. Code asks a Topology,
// never the OS, so a 384-CPU machine can be modelled on a 2-core laptop.
//
// A Topology is built from a TopologySpec (plain data: tests and hwloc
// discovery both produce one) by Topology::Create, which validates it and
// numbers the LLCs. See topology/topology_source.h for host, synthetic and
// XML sources.
//
// Thread contract: immutable after construction, safe for concurrent access.
#ifndef SCHEDCACHE_TOPOLOGY_TOPOLOGY_H_
#define SCHEDCACHE_TOPOLOGY_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/cpu_set.h"

namespace schedcache {

// CpuSpec describes one logical CPU (hwloc PU) of a TopologySpec.
struct CpuSpec {
  int os_index = 0;   // Linux CPU number
  int core = 0;       // any id unique per physical core across the machine
  int package = 0;    // package (socket) id
  int numa_node = 0;  // NUMA node os index
};

// CacheSpec is one last-level cache candidate of a TopologySpec.
struct CacheSpec {
  int level = 3;            // 1, 2, 3...
  int64_t size_bytes = 0;   // 0 when unknown
  CpuSet cpus;
};

// TopologySpec is the raw input to Topology::Create.
struct TopologySpec {
  std::string source;            // where it came from, for messages
  std::vector<CpuSpec> cpus;     // any order
  std::vector<CacheSpec> llcs;   // disjoint; CPUs in none get their own LLC
  CpuSet online;                 // empty means "all CPUs online"
};

// Cpu is one CPU of a Topology.
struct Cpu {
  int os_index;
  int core;       // dense core index, 0..num_cores()-1, in order of lowest CPU
  int package;    // package id as given
  int numa_node;  // NUMA node id as given
  int llc;        // dense LLC id
};

// Llc is one last-level cache. Ids are dense and numbered in order of the
// lowest CPU os index of each LLC.
struct Llc {
  int id;
  int level;           // cache level; 0 for a CPU with no cache information
  int64_t size_bytes;  // 0 when unknown
  CpuSet cpus;
  bool synthesized;    // true: the CPU had no cache information
};

// CpuGroup is a NUMA node or a package: an id and its CPUs.
struct CpuGroup {
  int id;
  CpuSet cpus;
};

class Topology {
 public:
  // Create validates `spec` and builds the topology. Returns InvalidArgument
  // (naming spec.source) when there are no CPUs, a CPU os index repeats or is
  // negative, an LLC names a CPU that does not exist, or two LLCs overlap.
  static absl::StatusOr<Topology> Create(TopologySpec spec);

  const std::string& source() const { return source_; }

  // cpus lists every CPU in increasing os index order.
  const std::vector<Cpu>& cpus() const { return cpus_; }
  const std::vector<Llc>& llcs() const { return llcs_; }
  const std::vector<CpuGroup>& numa_nodes() const { return numa_nodes_; }
  const std::vector<CpuGroup>& packages() const { return packages_; }
  const CpuSet& all_cpus() const { return all_cpus_; }
  const CpuSet& online_cpus() const { return online_; }
  int num_cores() const { return num_cores_; }
  // smt_threads is the largest number of CPUs sharing one core.
  int smt_threads() const { return smt_threads_; }
  // max_cpu is the highest CPU os index (so arrays indexed by os index need
  // max_cpu() + 1 slots).
  int max_cpu() const { return all_cpus_.Last(); }

  // HasCpu tells whether `os_index` is a CPU of this topology.
  bool HasCpu(int os_index) const;
  // cpu returns the CPU with `os_index`. REQUIRES: HasCpu(os_index).
  const Cpu& cpu(int os_index) const;
  // LlcOf returns the LLC id of a CPU, or -1 when the CPU does not exist.
  int LlcOf(int os_index) const;
  // NodeOf returns the NUMA node id of a CPU, or -1 when it does not exist.
  int NodeOf(int os_index) const;
  // NodeCpus returns the CPUs of NUMA node `node`, or an empty set.
  const CpuSet& NodeCpus(int node) const;
  // MaxLlcsPerNode is the largest number of LLCs that share a NUMA node (the
  // kernel enables cache-aware scheduling only when it is 2 or more).
  int MaxLlcsPerNode() const;

  // Summary is a one-line description: "2 packages, 2 NUMA nodes, 192 cores,
  // 384 CPUs (SMT 2), 24 L3 LLCs".
  std::string Summary() const;

 private:
  Topology() = default;

  std::string source_;
  std::vector<Cpu> cpus_;
  std::vector<int> index_of_cpu_;  // os index -> position in cpus_, or -1
  std::vector<Llc> llcs_;
  std::vector<CpuGroup> numa_nodes_;
  std::vector<CpuGroup> packages_;
  CpuSet all_cpus_;
  CpuSet online_;
  int num_cores_ = 0;
  int smt_threads_ = 1;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TOPOLOGY_TOPOLOGY_H_
