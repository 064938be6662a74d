// The built-in policies, registered by explicit calls in one place (no
// static self-registration), and the registry a server starts with.
//
// Thread contract: plain functions; call from one thread at start-up.
#ifndef SCHEDCACHE_POLICIES_BUILTIN_POLICIES_H_
#define SCHEDCACHE_POLICIES_BUILTIN_POLICIES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policies/policy_registry.h"

namespace schedcache {

// RegisterBuiltinPolicies registers full-scan, visited-scan, none and
// kernel.
absl::Status RegisterBuiltinPolicies(PolicyRegistryBuilder& builder);

// BuildPolicyRegistry registers the built-ins, then loads each plugin of
// `plugin_paths` in order (see LoadPolicyPlugin for its errors), and
// freezes the result.
absl::StatusOr<PolicyRegistry> BuildPolicyRegistry(
    const std::vector<std::string>& plugin_paths);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_BUILTIN_POLICIES_H_
