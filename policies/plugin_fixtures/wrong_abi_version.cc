// Broken plugin fixture: built for an ABI version this schedcache does not
// speak. The loader must refuse it before touching anything but the version.
#include "policies/plugin_abi.h"

namespace {
constexpr SchedcachePolicyPlugin kPlugin = {
    schedcache::kPolicyPluginAbiVersion + 1, nullptr};
}  // namespace

extern "C" __attribute__((visibility("default"))) const SchedcachePolicyPlugin*
schedcache_policy_plugin() {
  return &kPlugin;
}
