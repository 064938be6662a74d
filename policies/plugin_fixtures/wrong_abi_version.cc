// Broken plugin fixture: built for an ABI version this schedcache does not
// speak. The loader must refuse it before touching anything but the version.
#include "policies/plugin_abi.h"

namespace {
constexpr SchedcachePolicyPlugin kPlugin = {
    schedcache::kPolicyPluginAbiVersion + 1, nullptr};
}  // namespace

SCHEDCACHE_POLICY_PLUGIN_ENTRY(kPlugin)
