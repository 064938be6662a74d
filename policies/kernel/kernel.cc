#include "policies/kernel/kernel.h"

#include <memory>
#include <vector>

namespace schedcache {
namespace {

// KernelState is what the policy keeps of the kernel's last decision for
// one process.
struct KernelState {
  Preference preference;  // kNoData until the first decision
  int64_t nr_running_avg = 0;
};

class KernelPolicy : public Policy, public KernelDecisionObserver {
 public:
  explicit KernelPolicy(const ModelContext& model) : model_(model) {}

  Preference Account(const ProcessRef& process, const ThreadRef&, int64_t,
                     int64_t) override {
    return CurrentPreference(process.slot);
  }
  ScanOutcome Scan(const ProcessRef&, const ThreadRef&, int64_t) override {
    return {};
  }
  Preference CurrentPreference(uint32_t slot) const override {
    return slot < states_.size() ? states_[slot].preference : Preference{};
  }
  PolicyDecision Decide(const ProcessRef& process,
                        const ThreadRef*) const override {
    PolicyDecision decision;
    const Preference preference = CurrentPreference(process.slot);
    decision.preferred_cpu = preference.cpu;
    decision.preferred_llc = preference.llc;
    decision.reason = preference.reason;
    if (process.slot < states_.size()) {
      decision.nr_running_avg = states_[process.slot].nr_running_avg;
    }
    return decision;
  }
  void Forget(uint32_t slot) override {
    if (slot < states_.size()) states_[slot] = KernelState{};
  }

  KernelObservation ObserveKernelDecision(const ProcessRef& process,
                                          const KernelDecision& decision,
                                          int64_t) override {
    if (process.slot >= states_.size()) states_.resize(process.slot + 1);
    KernelState& state = states_[process.slot];
    // The engine accepts only -1 or a CPU of the topology.
    state.preference =
        decision.preferred_cpu < 0
            ? Preference{-1, -1, NoPreferenceReason::kKernelNone}
            : Preference{model_.topology().LlcOf(decision.preferred_cpu),
                         decision.preferred_cpu, NoPreferenceReason::kNone};
    state.nr_running_avg = decision.nr_running_avg;
    return KernelObservation{state.preference, decision.scanned};
  }

 private:
  const ModelContext& model_;
  std::vector<KernelState> states_;  // by process slot
};

class KernelFactory : public PolicyFactory {
 public:
  std::string_view name() const override { return "kernel"; }
  std::string_view description() const override {
    return "the running kernel's own decisions (task_cache_work, from "
           "kernel decisions in the input); scans are the kernel's";
  }
  std::vector<TunableSpec> tunables() const override { return {}; }
  std::unique_ptr<Policy> Create(ModelContext& model,
                                 const TunableValues&) const override {
    return std::make_unique<KernelPolicy>(model);
  }
};

}  // namespace

absl::Status RegisterKernel(PolicyRegistryBuilder& builder) {
  return builder.Register(std::make_unique<KernelFactory>());
}

}  // namespace schedcache
