#include "policies/model_context.h"

#include <algorithm>
#include <utility>

namespace schedcache {

void AdvanceRq(RqState& rq, int64_t now_jiffies, int64_t period_jiffies) {
  // Kernel __update_mm_sched, per-CPU half: `now` is jiffies, `delta > 0`
  // and the ceiling as there.
  if (now_jiffies <= rq.cpu_epoch_next) return;
  const int64_t n = (now_jiffies - rq.cpu_epoch_next + period_jiffies - 1) /
                    period_jiffies;
  rq.cpu_epoch += n;
  rq.cpu_epoch_next += n * period_jiffies;
  rq.cpu_runtime = ShiftDecay(rq.cpu_runtime, n);
}

ModelContext::ModelContext(std::shared_ptr<const Topology> topology,
                           ModelTunables tunables)
    : topology_(std::move(topology)),
      tunables_(tunables),
      epoch_period_(tunables.epoch_period()),
      jiffy_clock_(tunables.jiffy_clock()) {
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

void ModelContext::Start(int64_t first_jiffy) {
  // The kernel's sched_init sets every rq's cpu_epoch_next to the boot
  // jiffy, and __update_mm_sched moves it by whole periods: every CPU's
  // boundaries lie on one grid through epoch_anchor_jiffies. The first
  // one at or after first_jiffy is where the kernel's advance would have
  // put it by then.
  int64_t first_boundary = first_jiffy;
  if (const int64_t anchor = tunables_.epoch_anchor_jiffies; anchor >= 0) {
    const int64_t behind = FloorDiv(first_jiffy - anchor, epoch_period_);
    first_boundary = anchor + behind * epoch_period_;
    if (first_boundary < first_jiffy) first_boundary += epoch_period_;
  }
  started_ = true;
  for (RqState& rq : rqs_) rq.cpu_epoch_next = first_boundary;
}

}  // namespace schedcache
