#include "policies/kernel/kernel.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace schedcache {
namespace {

// KernelState is what the policy keeps of the kernel's last decision for
// one of the kernel's groups.
struct KernelState {
  Preference preference;  // kNoData until the first decision
  int64_t nr_running_avg = 0;
};

// KernelPolicy keeps the kernel's decisions by the kernel's own group
// (KernelDecision::group, its sched_cache_group's identity), not by the
// model's: the preference of a model group (ProcessRef::slot) is that of
// the kernel group its members' latest decision named. So when the kernel
// shares one group between processes that the input groups apart, a
// decision for one is the preference of all, as in the kernel; and when
// the input groups together processes the kernel kept apart, the model's
// group shows the kernel group that decided last (docs/MODEL.md, Cache
// groups). A decision naming no group (0: a capture without the field) is
// kept for the model's group alone.
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
    const KernelState* state = StateOf(slot);
    return state != nullptr ? state->preference : Preference{};
  }
  PolicyDecision Decide(const ProcessRef& process,
                        const ThreadRef*) const override {
    PolicyDecision decision;
    if (const KernelState* state = StateOf(process.slot); state != nullptr) {
      decision.preferred_cpu = state->preference.cpu;
      decision.preferred_llc = state->preference.llc;
      decision.reason = state->preference.reason;
      decision.nr_running_avg = state->nr_running_avg;
    }
    return decision;
  }
  void Forget(uint32_t slot) override {
    if (slot < slots_.size()) Leave(slot);
  }

  KernelObservation ObserveKernelDecision(const ProcessRef& process,
                                          const KernelDecision& decision,
                                          int64_t) override {
    if (process.slot >= slots_.size()) slots_.resize(process.slot + 1);
    if (slots_[process.slot].kernel_group != decision.group) {
      Leave(process.slot);
      slots_[process.slot].kernel_group = decision.group;
      if (decision.group != kNoKernelGroup) ++groups_[decision.group].slots;
    }
    KernelState& state = MutableStateOf(process.slot);
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
  static constexpr uint64_t kNoKernelGroup = 0;

  // SlotState is, per model group, the kernel group its members' latest
  // decision named, and the state of a decision that named none.
  struct SlotState {
    uint64_t kernel_group = kNoKernelGroup;
    KernelState own;
  };
  // SharedState is a kernel group's state, and how many model groups name
  // it, so it is forgotten with the last.
  struct SharedState {
    KernelState state;
    int slots = 0;
  };

  const KernelState* StateOf(uint32_t slot) const {
    if (slot >= slots_.size()) return nullptr;
    const SlotState& s = slots_[slot];
    if (s.kernel_group == kNoKernelGroup) return &s.own;
    return &groups_.find(s.kernel_group)->second.state;
  }
  KernelState& MutableStateOf(uint32_t slot) {
    SlotState& s = slots_[slot];
    return s.kernel_group == kNoKernelGroup ? s.own
                                            : groups_[s.kernel_group].state;
  }
  // Leave drops the model group in `slot`'s state and its kernel group.
  void Leave(uint32_t slot) {
    SlotState& s = slots_[slot];
    if (s.kernel_group != kNoKernelGroup) {
      auto it = groups_.find(s.kernel_group);
      if (--it->second.slots == 0) groups_.erase(it);
    }
    s = SlotState{};
  }

  const ModelContext& model_;
  std::vector<SlotState> slots_;  // by model group slot
  absl::flat_hash_map<uint64_t, SharedState> groups_;
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
