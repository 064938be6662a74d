#include "topology/topology.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace schedcache {
namespace {

absl::Status SpecError(const TopologySpec& spec, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("topology ", spec.source, ": ", problem));
}

// GroupsById collects the CPUs of each id in `id_of`, ordered by id.
std::vector<CpuGroup> GroupsById(const std::vector<Cpu>& cpus,
                                 int Cpu::*id_of) {
  std::map<int, CpuSet> by_id;
  for (const Cpu& cpu : cpus) by_id[cpu.*id_of].Set(cpu.os_index);
  std::vector<CpuGroup> groups;
  for (auto& [id, set] : by_id) groups.push_back(CpuGroup{id, std::move(set)});
  return groups;
}

}  // namespace

absl::StatusOr<Topology> Topology::Create(TopologySpec spec) {
  if (spec.cpus.empty()) return SpecError(spec, "has no CPUs");
  std::sort(spec.cpus.begin(), spec.cpus.end(),
            [](const CpuSpec& a, const CpuSpec& b) {
              return a.os_index < b.os_index;
            });
  Topology topo;
  topo.source_ = spec.source;
  for (size_t i = 0; i < spec.cpus.size(); ++i) {
    const int os = spec.cpus[i].os_index;
    if (os < 0) {
      return SpecError(spec, absl::StrCat("negative CPU os index ", os));
    }
    if (i > 0 && spec.cpus[i - 1].os_index == os) {
      return SpecError(spec, absl::StrCat("CPU ", os, " appears twice"));
    }
    topo.all_cpus_.Set(os);
  }

  // LLCs: validate, add a synthesized LLC for every CPU no cache covers, then
  // number them in order of their lowest CPU.
  CpuSet covered;
  std::vector<Llc> llcs;
  for (CacheSpec& cache : spec.llcs) {
    if (cache.cpus.Empty()) continue;
    if (!cache.cpus.IsSubsetOf(topo.all_cpus_)) {
      return SpecError(spec, absl::StrCat("an L", cache.level, " cache names CPUs ",
                                          (cache.cpus - topo.all_cpus_).ToString(),
                                          " that do not exist"));
    }
    if (cache.cpus.Intersects(covered)) {
      return SpecError(spec, absl::StrCat("LLCs overlap on CPUs ",
                                          (cache.cpus & covered).ToString()));
    }
    covered |= cache.cpus;
    llcs.push_back(Llc{0, cache.level, cache.size_bytes, std::move(cache.cpus),
                       /*synthesized=*/false});
  }
  (topo.all_cpus_ - covered).ForEach([&](int cpu) {
    llcs.push_back(Llc{0, 0, 0, CpuSet{cpu}, /*synthesized=*/true});
  });
  std::sort(llcs.begin(), llcs.end(), [](const Llc& a, const Llc& b) {
    return a.cpus.First() < b.cpus.First();
  });
  for (size_t i = 0; i < llcs.size(); ++i) llcs[i].id = static_cast<int>(i);

  // CPUs, with dense core ids in order of each core's lowest CPU.
  topo.index_of_cpu_.assign(topo.all_cpus_.Last() + 1, -1);
  std::map<int, int> dense_core;
  std::map<int, int> cpus_per_core;
  for (const CpuSpec& in : spec.cpus) {
    auto [it, inserted] =
        dense_core.try_emplace(in.core, static_cast<int>(dense_core.size()));
    ++cpus_per_core[in.core];
    topo.index_of_cpu_[in.os_index] = static_cast<int>(topo.cpus_.size());
    topo.cpus_.push_back(Cpu{in.os_index, it->second, in.package,
                             in.numa_node, /*llc=*/-1});
  }
  for (const Llc& llc : llcs) {
    llc.cpus.ForEach([&](int cpu) {
      topo.cpus_[topo.index_of_cpu_[cpu]].llc = llc.id;
    });
  }
  topo.llcs_ = std::move(llcs);
  topo.num_cores_ = static_cast<int>(dense_core.size());
  for (const auto& [core, count] : cpus_per_core) {
    topo.smt_threads_ = std::max(topo.smt_threads_, count);
  }
  topo.numa_nodes_ = GroupsById(topo.cpus_, &Cpu::numa_node);
  topo.packages_ = GroupsById(topo.cpus_, &Cpu::package);

  if (spec.online.Empty()) {
    topo.online_ = topo.all_cpus_;
  } else if (!spec.online.IsSubsetOf(topo.all_cpus_)) {
    return SpecError(spec, absl::StrCat("online CPUs ",
                                        (spec.online - topo.all_cpus_).ToString(),
                                        " do not exist"));
  } else {
    topo.online_ = std::move(spec.online);
  }
  return topo;
}

bool Topology::HasCpu(int os_index) const {
  return os_index >= 0 &&
         os_index < static_cast<int>(index_of_cpu_.size()) &&
         index_of_cpu_[os_index] >= 0;
}

const Cpu& Topology::cpu(int os_index) const {
  return cpus_[index_of_cpu_[os_index]];
}

int Topology::LlcOf(int os_index) const {
  return HasCpu(os_index) ? cpu(os_index).llc : -1;
}

int Topology::NodeOf(int os_index) const {
  return HasCpu(os_index) ? cpu(os_index).numa_node : -1;
}

const CpuSet& Topology::NodeCpus(int node) const {
  static const CpuSet& kEmpty = *new CpuSet();
  for (const CpuGroup& group : numa_nodes_) {
    if (group.id == node) return group.cpus;
  }
  return kEmpty;
}

int Topology::MaxLlcsPerNode() const {
  int best = 0;
  for (const CpuGroup& node : numa_nodes_) {
    int count = 0;
    for (const Llc& llc : llcs_) {
      if (llc.cpus.Intersects(node.cpus)) ++count;
    }
    best = std::max(best, count);
  }
  return best;
}

std::string Topology::Summary() const {
  std::set<int> levels;
  for (const Llc& llc : llcs_) levels.insert(llc.level);
  std::string level_text;
  for (int level : levels) {
    if (!level_text.empty()) level_text += "/";
    level_text += level == 0 ? "no-cache" : absl::StrCat("L", level);
  }
  return absl::StrFormat(
      "%d packages, %d NUMA nodes, %d cores, %d CPUs (SMT %d), %d %s LLCs",
      packages_.size(), numa_nodes_.size(), num_cores_, cpus_.size(),
      smt_threads_, llcs_.size(), level_text);
}

}  // namespace schedcache
