// full-scan: mainline CONFIG_SCHED_CACHE. Each scan visits every CPU of
// every LLC in the scan mask.
#ifndef SCHEDCACHE_POLICIES_FULL_SCAN_FULL_SCAN_H_
#define SCHEDCACHE_POLICIES_FULL_SCAN_FULL_SCAN_H_

#include "absl/status/status.h"
#include "policies/policy_registry.h"

namespace schedcache {

// RegisterFullScan registers "full-scan" in `builder`.
absl::Status RegisterFullScan(PolicyRegistryBuilder& builder);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_FULL_SCAN_FULL_SCAN_H_
