// Broken plugin fixture: a valid plugin whose policy takes a built-in's name.
#include <memory>

#include "policies/plugin_abi.h"

namespace schedcache {
namespace {

class DuplicateFactory : public PolicyFactory {
 public:
  std::string_view name() const override { return "full-scan"; }
  std::string_view description() const override {
    return "fixture: collides with the built-in full-scan";
  }
  std::vector<TunableSpec> tunables() const override { return {}; }
  std::unique_ptr<Policy> Create(ModelContext&,
                                 const TunableValues&) const override {
    return nullptr;  // never created: registration fails
  }
};

std::unique_ptr<PolicyFactory> CreateFactory() {
  return std::make_unique<DuplicateFactory>();
}

constexpr SchedcachePolicyPlugin kPlugin = {kPolicyPluginAbiVersion,
                                            &CreateFactory};

}  // namespace
}  // namespace schedcache

SCHEDCACHE_POLICY_PLUGIN_ENTRY(schedcache::kPlugin)
