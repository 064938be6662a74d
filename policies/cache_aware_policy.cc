#include "policies/cache_aware_policy.h"

#include <utility>

namespace schedcache {

CacheAwarePolicy::CacheAwarePolicy(ModelContext& model, ScanScope scope)
    : model_(model, scope) {}

Preference CacheAwarePolicy::Account(const ProcessRef& process,
                                     const ThreadRef& thread, int64_t delta_ns,
                                     int64_t) {
  MmState& mm = MmFor(process.slot);
  model_.Account(mm, process, thread.cpu, delta_ns);
  return PreferenceOf(mm);
}

ScanOutcome CacheAwarePolicy::Scan(const ProcessRef& process,
                                   const ThreadRef& thread, int64_t now) {
  return model_.Scan(MmFor(process.slot), process, thread, now);
}

void CacheAwarePolicy::GrowTo(uint32_t slot) { mms_.resize(slot + 1); }

Preference CacheAwarePolicy::CurrentPreference(uint32_t slot) const {
  if (slot < mms_.size()) return PreferenceOf(mms_[slot]);
  if (!model_.context().enabled()) return kDisabledPreference;
  return {};  // kNoData
}

PolicyDecision CacheAwarePolicy::Decide(const ProcessRef& process,
                                        const ThreadRef* thread) const {
  PolicyDecision decision;
  const Preference preference = CurrentPreference(process.slot);
  decision.preferred_cpu = preference.cpu;
  decision.preferred_llc = preference.llc;
  decision.reason = preference.reason;
  if (!model_.context().enabled() || process.slot >= mms_.size()) {
    return decision;
  }
  const MmState& mm = mms_[process.slot];
  if (thread != nullptr && decision.preferred_llc >= 0 &&
      model_.ThreadPreferredLlc(mm, *thread) < 0) {
    decision.preferred_llc = -1;
    decision.reason = NoPreferenceReason::kOtherNumaNode;
  }
  decision.llc_occupancy = model_.Evidence(mm);
  decision.nr_running = mm.last_nr_running;
  decision.nr_running_avg = mm.nr_running_avg;
  decision.cost = mm.last_cost;
  return decision;
}

void CacheAwarePolicy::Forget(uint32_t slot) {
  if (slot < mms_.size()) mms_[slot] = MmState{};
}

namespace {

class CacheAwareFactory : public PolicyFactory {
 public:
  CacheAwareFactory(std::string name, std::string description, ScanScope scope)
      : name_(std::move(name)),
        description_(std::move(description)),
        scope_(scope) {}

  std::string_view name() const override { return name_; }
  std::string_view description() const override { return description_; }
  std::vector<TunableSpec> tunables() const override { return {}; }
  std::unique_ptr<Policy> Create(ModelContext& model,
                                 const TunableValues&) const override {
    return std::make_unique<CacheAwarePolicy>(model, scope_);
  }

 private:
  const std::string name_;
  const std::string description_;
  const ScanScope scope_;
};

}  // namespace

std::unique_ptr<PolicyFactory> MakeCacheAwareFactory(std::string name,
                                                     std::string description,
                                                     ScanScope scope) {
  return std::make_unique<CacheAwareFactory>(std::move(name),
                                             std::move(description), scope);
}

}  // namespace schedcache
