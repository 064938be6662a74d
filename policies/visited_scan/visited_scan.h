// visited-scan: the visited-cpus series (v6). Each scan visits only the CPUs
// the process ran on within affinity_timeout_epochs.
#ifndef SCHEDCACHE_POLICIES_VISITED_SCAN_VISITED_SCAN_H_
#define SCHEDCACHE_POLICIES_VISITED_SCAN_VISITED_SCAN_H_

#include "absl/status/status.h"
#include "policies/policy_registry.h"

namespace schedcache {

// RegisterVisitedScan registers "visited-scan" in `builder`.
absl::Status RegisterVisitedScan(PolicyRegistryBuilder& builder);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_VISITED_SCAN_VISITED_SCAN_H_
