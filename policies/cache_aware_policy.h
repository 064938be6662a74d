// CacheAwarePolicy: the kernel model of DESIGN.md §1 as a Policy, with its
// per-process MmState. full-scan and visited-scan are this class with a
// different ScanScope (their folders only name and register it).
//
// Thread contract: thread-compatible (one writer: the session).
#ifndef SCHEDCACHE_POLICIES_CACHE_AWARE_POLICY_H_
#define SCHEDCACHE_POLICIES_CACHE_AWARE_POLICY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/kernel_model.h"
#include "policies/policy.h"

namespace schedcache {

class CacheAwarePolicy final : public Policy {
 public:
  CacheAwarePolicy(ModelContext& model, ScanScope scope);

  Preference Account(const ProcessRef& process, const ThreadRef& thread,
                     int64_t delta_ns, int64_t now) override;
  ScanOutcome Scan(const ProcessRef& process, const ThreadRef& thread,
                   int64_t now) override;
  Preference CurrentPreference(uint32_t slot) const override;
  PolicyDecision Decide(const ProcessRef& process,
                        const ThreadRef* thread) const override;
  void Forget(uint32_t slot) override;

  // mm is the state of the process in `slot` (for tests and measurement).
  // REQUIRES: the slot was seen.
  const MmState& mm(uint32_t slot) const { return mms_[slot]; }

 private:
  MmState& MmFor(uint32_t slot) {
    if (slot >= mms_.size()) mms_.resize(slot + 1);
    return mms_[slot];
  }
  // PreferenceOf is CurrentPreference for the process whose state is `mm`:
  // Account has the state at hand, so it neither looks the slot up again
  // nor calls out of line after every sample.
  Preference PreferenceOf(const MmState& mm) const {
    if (!model_.context().enabled()) return kDisabledPreference;
    return {model_.PreferredLlc(mm), mm.pref_cpu,
            mm.pref_cpu >= 0 ? NoPreferenceReason::kNone : mm.reason};
  }

  static constexpr Preference kDisabledPreference{
      -1, -1, NoPreferenceReason::kDisabled};

  KernelModel model_;
  std::vector<MmState> mms_;  // by ProcessRef::slot
};

// MakeCacheAwareFactory returns the factory of a kernel-model policy named
// `name` (no tunables of its own: the model's are per session).
std::unique_ptr<PolicyFactory> MakeCacheAwareFactory(std::string name,
                                                     std::string description,
                                                     ScanScope scope);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_CACHE_AWARE_POLICY_H_
