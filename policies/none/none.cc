#include "policies/none/none.h"

#include <memory>

namespace schedcache {
namespace {

class NonePolicy : public Policy {
 public:
  static constexpr Preference kNoPreference = {
      -1, -1, NoPreferenceReason::kNotCacheAware};

  Preference Account(const ProcessRef&, const ThreadRef&, int64_t,
                     int64_t) override {
    return kNoPreference;
  }
  ScanOutcome Scan(const ProcessRef&, const ThreadRef&, int64_t) override {
    return {};
  }
  Preference CurrentPreference(uint32_t) const override {
    return kNoPreference;
  }
  PolicyDecision Decide(const ProcessRef&, const ThreadRef*) const override {
    PolicyDecision decision;
    decision.reason = kNoPreference.reason;
    return decision;
  }
  void Forget(uint32_t) override {}
};

class NoneFactory : public PolicyFactory {
 public:
  std::string_view name() const override { return "none"; }
  std::string_view description() const override {
    return "no cache awareness: preferred LLC always -1, cost 0 (baseline)";
  }
  std::vector<TunableSpec> tunables() const override { return {}; }
  std::unique_ptr<Policy> Create(ModelContext&,
                                 const TunableValues&) const override {
    return std::make_unique<NonePolicy>();
  }
};

}  // namespace

absl::Status RegisterNone(PolicyRegistryBuilder& builder) {
  return builder.Register(std::make_unique<NoneFactory>());
}

}  // namespace schedcache
