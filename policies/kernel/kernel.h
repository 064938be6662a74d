// kernel: the running kernel as a policy. Its preference for a cache group
// is the LLC of the preferred CPU of the kernel's last decision for the
// kernel's group that the group's members last named (KernelDecision,
// events/event.h: what task_cache_work left in that sched_cache_group;
// docs/MODEL.md, Cache groups), or none with reason kKernelNone when that
// was -1, and kNoData before the first decision. It never scans (Scan
// returns kNoScan), so it scans no CPU; its executed scans are the
// kernel's (decisions with `scanned`), so that a report shows the
// kernel's scan count in the column of every policy's. Without kernel
// decisions in the input it never prefers anything (docs/EVALUATION.md).
#ifndef SCHEDCACHE_POLICIES_KERNEL_KERNEL_H_
#define SCHEDCACHE_POLICIES_KERNEL_KERNEL_H_

#include "absl/status/status.h"
#include "policies/policy_registry.h"

namespace schedcache {

// RegisterKernel registers "kernel" in `builder`.
absl::Status RegisterKernel(PolicyRegistryBuilder& builder);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_KERNEL_KERNEL_H_
