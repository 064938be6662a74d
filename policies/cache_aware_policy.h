// CacheAwarePolicy: the kernel model of docs/MODEL.md, The model as a Policy,
// with its per-process MmState. full-scan and visited-scan are this class with
// a different ScanScope (their folders only name and register it).
//
// Thread contract: thread-compatible (one writer: the session).
#ifndef SCHEDCACHE_POLICIES_CACHE_AWARE_POLICY_H_
#define SCHEDCACHE_POLICIES_CACHE_AWARE_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
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
    if (slot >= mms_.size()) [[unlikely]] GrowTo(slot);
    return mms_[slot];
  }
  // GrowTo makes mms_ hold `slot`. Out of line: inlined, the vector's
  // reallocation made Account save six registers and a stack frame on
  // every call, for a path taken once per new slot.
  void GrowTo(uint32_t slot);
  // PreferenceOf is CurrentPreference for the process whose state is `mm`:
  // Account has the state at hand, so it neither looks the slot up again
  // nor calls out of line after every sample.
  //
  // With a preference, its llc and cpu are written as one 8-byte word.
  // Built field by field, GCC 12 stores the two ints to the stack and
  // reloads them as the 8-byte return register: a load that spans two
  // stores cannot take their data by store forwarding and waits, and
  // after every Account that wait was the largest cost in the engine's
  // profile. One return, too: with several, GCC merges them through the
  // stack again.
  Preference PreferenceOf(const MmState& mm) const {
    static_assert(offsetof(Preference, llc) == 0 &&
                  offsetof(Preference, cpu) == sizeof(int));
    Preference preference;  // no llc, no cpu
    if (!model_.context().enabled()) {
      preference.reason = NoPreferenceReason::kDisabled;
    } else if (mm.pref_cpu < 0) {
      preference.reason = mm.reason;
    } else {
      const uint64_t llc_and_cpu =
          static_cast<uint32_t>(model_.PreferredLlc(mm)) |
          uint64_t{static_cast<uint32_t>(mm.pref_cpu)} << 32;
      std::memcpy(static_cast<void*>(&preference), &llc_and_cpu,
                  sizeof llc_and_cpu);
      preference.reason = NoPreferenceReason::kNone;
    }
    return preference;
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
