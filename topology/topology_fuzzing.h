// CheckTopologyInvariants: what topology.h promises of every Topology, checked
// by the topology fuzz targets on whatever a source they fuzz builds.
#ifndef SCHEDCACHE_TOPOLOGY_TOPOLOGY_FUZZING_H_
#define SCHEDCACHE_TOPOLOGY_TOPOLOGY_FUZZING_H_

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/fuzzing.h"
#include "topology/topology.h"
#include "topology/topology_source.h"

namespace schedcache {

// FuzzTopologyLimits bounds the topologies the fuzz targets build: hwloc's
// own build time grows faster than linearly with the CPUs under one object
// (a few seconds for 10,000 under ASan), which would read as a hang of ours;
// 1024 CPUs keeps every input fast and still covers every code path. XML
// gets 10 s, below libFuzzer's -timeout of 25 s in .ci/fuzz, so a reader
// that hangs is an error of LoadTopologyFromXml, not a fuzz finding.
inline TopologyLimits FuzzTopologyLimits() {
  return TopologyLimits{1024, "", absl::Seconds(10)};
}

namespace topology_fuzzing_internal {

// CheckCpus: CPUs in increasing os index order, exactly all_cpus(), each
// in its LLC and its NUMA node, on a dense core id; smt_threads() is the
// largest number of CPUs on one core.
inline void CheckCpus(const Topology& topology) {
  const std::string& source = topology.source();
  const std::vector<Cpu>& cpus = topology.cpus();
  FUZZ_CHECK(!cpus.empty(), absl::StrCat(source, ": no CPUs"));
  FUZZ_CHECK(topology.all_cpus().Count() == static_cast<int>(cpus.size()),
             absl::StrCat(source, ": ", cpus.size(), " CPUs, all_cpus ",
                          topology.all_cpus().ToString()));
  std::vector<int> cpus_per_core(topology.num_cores(), 0);
  for (size_t i = 0; i < cpus.size(); ++i) {
    const Cpu& cpu = cpus[i];
    FUZZ_CHECK(i == 0 || cpus[i - 1].os_index < cpu.os_index,
               absl::StrCat(source, ": CPU ", cpu.os_index, " listed at ", i));
    FUZZ_CHECK(topology.HasCpu(cpu.os_index) &&
                   topology.LlcOf(cpu.os_index) == cpu.llc &&
                   cpu.llc >= 0 &&
                   cpu.llc < static_cast<int>(topology.llcs().size()) &&
                   topology.llcs()[cpu.llc].cpus.Test(cpu.os_index),
               absl::StrCat(source, ": CPU ", cpu.os_index, " in LLC ",
                            cpu.llc, ", LlcOf ", topology.LlcOf(cpu.os_index)));
    FUZZ_CHECK(cpu.core >= 0 && cpu.core < topology.num_cores(),
               absl::StrCat(source, ": CPU ", cpu.os_index, " on core ",
                            cpu.core, " of ", topology.num_cores()));
    ++cpus_per_core[cpu.core];
    FUZZ_CHECK(topology.NodeCpus(cpu.numa_node).Test(cpu.os_index),
               absl::StrCat(source, ": CPU ", cpu.os_index, " not in node ",
                            cpu.numa_node));
  }
  const int widest = *std::max_element(cpus_per_core.begin(),
                                       cpus_per_core.end());
  FUZZ_CHECK(widest == topology.smt_threads() &&
                 std::count(cpus_per_core.begin(), cpus_per_core.end(), 0) == 0,
             absl::StrCat(source, ": smt_threads ", topology.smt_threads(),
                          ", widest core ", widest, ", ",
                          topology.num_cores(), " cores"));
}

// CheckLlcs: the LLCs partition the CPUs, with dense ids numbered in order
// of their lowest CPU.
inline void CheckLlcs(const Topology& topology) {
  const std::string& source = topology.source();
  CpuSet covered;
  int previous_lowest = -1;
  for (size_t id = 0; id < topology.llcs().size(); ++id) {
    const Llc& llc = topology.llcs()[id];
    FUZZ_CHECK(llc.id == static_cast<int>(id) && !llc.cpus.Empty() &&
                   llc.cpus.First() > previous_lowest &&
                   !llc.cpus.Intersects(covered),
               absl::StrCat(source, ": LLC ", llc.id, " at ", id, " holds ",
                            llc.cpus.ToString(), " after ",
                            covered.ToString()));
    previous_lowest = llc.cpus.First();
    covered |= llc.cpus;
  }
  FUZZ_CHECK(covered == topology.all_cpus(),
             absl::StrCat(source, ": LLCs cover ", covered.ToString(), " of ",
                          topology.all_cpus().ToString()));
}

}  // namespace topology_fuzzing_internal

// CheckTopologyInvariants aborts (FUZZ_CHECK) unless `topology` keeps the
// promises of topology.h on its CPUs, cores, LLCs and NUMA nodes.
inline void CheckTopologyInvariants(const Topology& topology) {
  topology_fuzzing_internal::CheckCpus(topology);
  topology_fuzzing_internal::CheckLlcs(topology);
  FUZZ_CHECK(!topology.Summary().empty(), topology.source());
}

}  // namespace schedcache

#endif  // SCHEDCACHE_TOPOLOGY_TOPOLOGY_FUZZING_H_
