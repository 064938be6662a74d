#include "policies/visited_scan/visited_scan.h"

#include "policies/cache_aware_policy.h"

namespace schedcache {

absl::Status RegisterVisitedScan(PolicyRegistryBuilder& builder) {
  return builder.Register(MakeCacheAwareFactory(
      "visited-scan",
      "visited-cpus series v6: scans only the CPUs the process ran on within "
      "affinity_timeout_epochs",
      ScanScope::kVisitedCpus));
}

}  // namespace schedcache
