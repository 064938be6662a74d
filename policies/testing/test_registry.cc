#include "policies/testing/test_registry.h"

#include "policies/builtin_policies.h"

namespace schedcache::test_support {

std::string ExamplePluginPath() { return SCHEDCACHE_EXAMPLE_PLUGIN; }

const PolicyRegistry& TestRegistry() {
  // Built once per test binary and never mutated afterwards.
  static const PolicyRegistry& registry = [] () -> const PolicyRegistry& {
    absl::StatusOr<PolicyRegistry> built =
        BuildPolicyRegistry({ExamplePluginPath()});
    if (!built.ok()) {
      PolicyRegistryBuilder builder;
      (void)RegisterBuiltinPolicies(builder);
      return *new PolicyRegistry(std::move(builder).Build());
    }
    return *new PolicyRegistry(*std::move(built));
  }();
  return registry;
}

}  // namespace schedcache::test_support
