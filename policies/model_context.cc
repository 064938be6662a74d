#include "policies/model_context.h"

#include <algorithm>
#include <utility>

namespace schedcache {

void AdvanceRq(RqState& rq, int64_t now, int64_t epoch_period_ns) {
  // Kernel __update_mm_sched, per-CPU half.
  if (now <= rq.cpu_epoch_next) return;
  const int64_t n = (now - rq.cpu_epoch_next + epoch_period_ns - 1) /
                    epoch_period_ns;
  rq.cpu_epoch += n;
  rq.cpu_epoch_next += n * epoch_period_ns;
  rq.cpu_runtime = ShiftDecay(rq.cpu_runtime, n);
}

ModelContext::ModelContext(std::shared_ptr<const Topology> topology,
                           ModelTunables tunables)
    : topology_(std::move(topology)), tunables_(tunables) {
  const Topology& topo = *topology_;
  enabled_ = tunables_.enable == Enable::kOn ||
             (tunables_.enable == Enable::kAuto && topo.MaxLlcsPerNode() >= 2);
  const int slots = topo.max_cpu() + 1;
  llc_of_.assign(slots, -1);
  node_of_.assign(slots, -1);
  rqs_.assign(slots, RqState{});
  std::vector<int> online_per_core(topo.num_cores(), 0);
  for (const Cpu& cpu : topo.cpus()) {
    llc_of_[cpu.os_index] = cpu.llc;
    node_of_[cpu.os_index] = cpu.numa_node;
    if (topo.online_cpus().Test(cpu.os_index)) ++online_per_core[cpu.core];
  }
  const bool smt_active =
      std::any_of(online_per_core.begin(), online_per_core.end(),
                  [](int online) { return online >= 2; });
  smt_threads_ = smt_active ? topo.smt_threads() : 1;
  for (const Llc& llc : topo.llcs()) {
    llc_span_.push_back(llc.cpus & topo.online_cpus());
    llc_size_.push_back(llc_span_.back().Count());
    llc_bytes_.push_back(llc.size_bytes);
  }
  for (const CpuGroup& node : topo.numa_nodes()) {
    node_ids_.push_back(node.id);
    node_span_.push_back(node.cpus & topo.online_cpus());
  }
}

const CpuSet& ModelContext::node_span(int node) const {
  static const CpuSet& kEmpty = *new CpuSet();
  for (size_t i = 0; i < node_ids_.size(); ++i) {
    if (node_ids_[i] == node) return node_span_[i];
  }
  return kEmpty;
}

void ModelContext::Start(int64_t first_timestamp_ns) {
  started_ = true;
  for (RqState& rq : rqs_) rq.cpu_epoch_next = first_timestamp_ns;
}

}  // namespace schedcache
