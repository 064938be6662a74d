// none: no cache awareness (the seed's "baseline" column). The preferred
// LLC is always -1 with reason kNotCacheAware, and nothing is ever scanned.
#ifndef SCHEDCACHE_POLICIES_NONE_NONE_H_
#define SCHEDCACHE_POLICIES_NONE_NONE_H_

#include "absl/status/status.h"
#include "policies/policy_registry.h"

namespace schedcache {

// RegisterNone registers "none" in `builder`.
absl::Status RegisterNone(PolicyRegistryBuilder& builder);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_NONE_NONE_H_
