#include "policies/builtin_policies.h"

#include "common/status_macros.h"
#include "policies/full_scan/full_scan.h"
#include "policies/kernel/kernel.h"
#include "policies/none/none.h"
#include "policies/plugin_loader.h"
#include "policies/visited_scan/visited_scan.h"

namespace schedcache {

absl::Status RegisterBuiltinPolicies(PolicyRegistryBuilder& builder) {
  RETURN_IF_ERROR(RegisterFullScan(builder));
  RETURN_IF_ERROR(RegisterVisitedScan(builder));
  RETURN_IF_ERROR(RegisterNone(builder));
  RETURN_IF_ERROR(RegisterKernel(builder));
  return absl::OkStatus();
}

absl::StatusOr<PolicyRegistry> BuildPolicyRegistry(
    const std::vector<std::string>& plugin_paths) {
  PolicyRegistryBuilder builder;
  RETURN_IF_ERROR(RegisterBuiltinPolicies(builder));
  for (const std::string& path : plugin_paths) {
    RETURN_IF_ERROR(LoadPolicyPlugin(path, builder));
  }
  return std::move(builder).Build();
}

}  // namespace schedcache
