// llc-most-runtime: an example policy plugin, built as a MODULE library and
// loaded through plugin_abi.h. It prefers the LLC holding the most decayed
// runtime of the cache group (the process, unless samples name a group;
// summed over the CPUs its members ran on), re-chosen at every scan
// trigger (once per epoch of the group), with no 2x hysteresis. It reads
// the session's shared per-CPU state and reuses the kernel model's decay,
// as any plugin may.
//
// Thread contract: thread-compatible (one writer: the session).
#include <algorithm>
#include <memory>
#include <string_view>
#include <vector>

#include "policies/kernel_model.h"
#include "policies/plugin_abi.h"
#include "policies/policy.h"
#include "policies/scan_stopwatch.h"

namespace schedcache {
namespace {

constexpr char kMinSharePercent[] = "min_share_percent";

struct ProcessState {
  int32_t pref_cpu = -1;
  std::vector<CpuEntry> cpus;  // sorted by cpu
  std::vector<LlcOccupancy> last_runtime;  // decayed ns per LLC
  ScanCost last_cost;
};

class LlcMostRuntimePolicy final : public Policy {
 public:
  LlcMostRuntimePolicy(ModelContext& model, int64_t min_share_percent)
      : model_(model), min_share_percent_(min_share_percent) {}

  Preference Account(const ProcessRef& process, const ThreadRef& thread,
                     int64_t delta_ns, int64_t) override {
    if (!model_.enabled()) return CurrentPreference(process.slot);
    const int cpu = thread.cpu;
    ProcessState& p = StateFor(process.slot);
    auto it = std::lower_bound(
        p.cpus.begin(), p.cpus.end(), cpu,
        [](const CpuEntry& e, int c) { return e.cpu < c; });
    if (it == p.cpus.end() || it->cpu != cpu) {
      const int64_t epoch = model_.rq(cpu).cpu_epoch;
      it = p.cpus.insert(it, CpuEntry{.cpu = cpu, .epoch = epoch});
    }
    CatchUpEntry(model_.rq(cpu), *it);
    it->runtime = AddRuntime(it->runtime, static_cast<uint64_t>(delta_ns));
    return CurrentPreference(process.slot);  // chosen at scan triggers only
  }

  ScanOutcome Scan(const ProcessRef& process, const ThreadRef&,
                   int64_t now) override {
    if (!model_.enabled()) return {ScanOutcome::Kind::kSkippedDisabled, {}};
    return Choose(StateFor(process.slot), now);
  }

  Preference CurrentPreference(uint32_t slot) const override {
    if (!model_.enabled()) return {-1, -1, NoPreferenceReason::kDisabled};
    if (slot >= states_.size() || states_[slot].pref_cpu < 0) return {};
    const int cpu = states_[slot].pref_cpu;
    return {model_.llc_of(cpu), cpu, NoPreferenceReason::kNone};
  }

  PolicyDecision Decide(const ProcessRef& process,
                        const ThreadRef*) const override {
    PolicyDecision d;
    const Preference preference = CurrentPreference(process.slot);
    d.preferred_cpu = preference.cpu;
    d.preferred_llc = preference.llc;
    d.reason = preference.reason;
    if (!model_.enabled() || process.slot >= states_.size()) return d;
    const ProcessState& p = states_[process.slot];
    d.llc_occupancy = p.last_runtime;
    d.cost = p.last_cost;
    return d;
  }

  void Forget(uint32_t slot) override {
    if (slot < states_.size()) states_[slot] = ProcessState{};
  }

 private:
  ProcessState& StateFor(uint32_t slot) {
    if (slot >= states_.size()) states_.resize(slot + 1);
    return states_[slot];
  }

  // Choose sums the decayed runtime of each LLC the process ran on and
  // prefers the largest (the first in CPU order on a tie).
  ScanOutcome Choose(ProcessState& p, int64_t now) {
    const ScanStopwatch stopwatch;
    ScanOutcome outcome{ScanOutcome::Kind::kExecuted, {}};
    p.last_runtime.clear();
    uint64_t total = 0;
    for (CpuEntry& entry : p.cpus) {
      model_.Advance(entry.cpu, now);
      CatchUpEntry(model_.rq(entry.cpu), entry);
      ++outcome.cost.cpus_scanned;
      const int llc = model_.llc_of(entry.cpu);
      auto it = std::find_if(p.last_runtime.begin(), p.last_runtime.end(),
                             [&](const LlcOccupancy& o) { return o.llc == llc; });
      if (it == p.last_runtime.end()) {
        p.last_runtime.push_back(LlcOccupancy{llc, 0});
        it = p.last_runtime.end() - 1;
      }
      it->occupancy = AddRuntime(it->occupancy, entry.runtime);
      total = AddRuntime(total, entry.runtime);
    }
    outcome.cost.llcs_scanned = static_cast<int>(p.last_runtime.size());
    int best_llc = -1;
    uint64_t best = 0;
    for (const LlcOccupancy& o : p.last_runtime) {
      if (o.occupancy > best) {
        best = o.occupancy;
        best_llc = o.llc;
      }
    }
    const bool enough =
        best_llc >= 0 && static_cast<unsigned __int128>(best) * 100 >=
                             static_cast<unsigned __int128>(total) *
                                 static_cast<uint64_t>(min_share_percent_);
    p.pref_cpu = -1;
    if (enough) {
      uint64_t top = 0;
      for (const CpuEntry& entry : p.cpus) {
        if (model_.llc_of(entry.cpu) == best_llc && entry.runtime > top) {
          top = entry.runtime;
          p.pref_cpu = entry.cpu;
        }
      }
    }
    outcome.cost.scan_ns = stopwatch.ElapsedNs();
    p.last_cost = outcome.cost;
    return outcome;
  }

  ModelContext& model_;
  const int64_t min_share_percent_;
  std::vector<ProcessState> states_;  // by ProcessRef::slot
};

class LlcMostRuntimeFactory : public PolicyFactory {
 public:
  std::string_view name() const override { return "llc-most-runtime"; }
  std::string_view description() const override {
    return "example plugin: the LLC with the most decayed runtime, chosen "
           "each epoch without the 2x rule";
  }
  std::vector<TunableSpec> tunables() const override {
    return {{kMinSharePercent,
             "share of the process's decayed runtime the LLC must hold, %", 0,
             0, 100, {}}};
  }
  std::unique_ptr<Policy> Create(ModelContext& model,
                                 const TunableValues& values) const override {
    auto it = values.find(kMinSharePercent);
    return std::make_unique<LlcMostRuntimePolicy>(
        model, it == values.end() ? 0 : it->second);
  }
};

std::unique_ptr<PolicyFactory> CreateFactory() {
  return std::make_unique<LlcMostRuntimeFactory>();
}

constexpr SchedcachePolicyPlugin kPlugin = {kPolicyPluginAbiVersion,
                                            &CreateFactory};

}  // namespace
}  // namespace schedcache

SCHEDCACHE_POLICY_PLUGIN_ENTRY(schedcache::kPlugin)
