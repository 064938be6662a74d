// PolicyRegistry: the frozen set of policy factories a server offers.
// Built once by a PolicyRegistryBuilder (built-ins registered by explicit
// calls, see builtin_policies.h, then any .so plugins), then immutable.
//
// Thread contract: PolicyRegistry is immutable and safe for concurrent
// access; PolicyRegistryBuilder is thread-compatible.
#ifndef SCHEDCACHE_POLICIES_POLICY_REGISTRY_H_
#define SCHEDCACHE_POLICIES_POLICY_REGISTRY_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "policies/policy.h"

namespace schedcache {

class PolicyRegistry {
 public:
  PolicyRegistry(PolicyRegistry&&) = default;
  PolicyRegistry& operator=(PolicyRegistry&&) = default;

  // Find returns the factory named `name`, or nullptr.
  const PolicyFactory* Find(std::string_view name) const;
  // factories lists every factory in registration order.
  std::vector<const PolicyFactory*> factories() const;

 private:
  friend class PolicyRegistryBuilder;
  PolicyRegistry() = default;

  std::vector<std::unique_ptr<PolicyFactory>> factories_;
};

class PolicyRegistryBuilder {
 public:
  // Register adds a factory. Returns InvalidArgument for a null factory or a
  // name that is not lower-kebab, AlreadyExists for a name already taken.
  absl::Status Register(std::unique_ptr<PolicyFactory> factory);

  // Build freezes the registry; the builder is left empty.
  PolicyRegistry Build() &&;

 private:
  PolicyRegistry registry_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_POLICY_REGISTRY_H_
