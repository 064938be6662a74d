#include "policies/full_scan/full_scan.h"

#include "policies/cache_aware_policy.h"

namespace schedcache {

absl::Status RegisterFullScan(PolicyRegistryBuilder& builder) {
  return builder.Register(MakeCacheAwareFactory(
      "full-scan",
      "mainline CONFIG_SCHED_CACHE: scans every CPU of every LLC in the scan "
      "mask",
      ScanScope::kAllCpus));
}

}  // namespace schedcache
