// The binary interface between schedcache and a policy plugin (.so). A
// plugin exports exactly one symbol, `schedcache_policy_plugin`, an
// extern "C" function returning a SchedcachePolicyPlugin. The loader reads
// abi_version first and touches nothing else unless it equals
// kPolicyPluginAbiVersion, so a plugin built against other headers is
// refused rather than called.
//
// Bump kPolicyPluginAbiVersion whenever policy.h, model_context.h,
// kernel_model.h, decision.h or tunables.h change in a way that alters the
// layout or the vtables a plugin compiles against.
//
// KernelDecisionObserver (policy.h) is deliberately not a part of Policy:
// the engine finds it with a dynamic_cast of each policy it creates, so a
// plugin is never asked for it and is never told of kernel decisions; the
// engine still measures its agreement with the kernel (docs/MODEL.md,
// "Agreement with the kernel").
#ifndef SCHEDCACHE_POLICIES_PLUGIN_ABI_H_
#define SCHEDCACHE_POLICIES_PLUGIN_ABI_H_

#include <cstdint>
#include <memory>

#include "policies/policy.h"

namespace schedcache {

// 7: a policy decides per cache group (docs/MODEL.md, Cache groups):
// ProcessRef describes a group (its slot, summed thread count and
// footprint; tgid 0 for a named one), RqState::curr_group (the current
// thread's group slot) replaces curr_tgid, and PolicyDecision carries
// cache_group. 6: MmState::visited_entries (indexes into MmState::cpus)
// replaces visited_cpus; CpuEntry keeps visit_lag (31 bits) for
// last_visit_epoch. 5: ScanOutcome carries the scan's per-LLC occupancy (llc_occupancy);
// MmState::visited_cpus is a sorted vector of CPUs, CpuEntry has a
// `visited` flag and KernelModel new scratch members (the sparse visited
// scan). 4: Policy::Account and Policy::CurrentPreference return a
// Preference (LLC, CPU, reason), and Account reads the CPU from
// ThreadRef::cpu.
inline constexpr uint32_t kPolicyPluginAbiVersion = 7;
// kPolicyPluginEntryPoint is the name of the one exported symbol.
inline constexpr char kPolicyPluginEntryPoint[] = "schedcache_policy_plugin";

}  // namespace schedcache

extern "C" {

// SchedcachePolicyPlugin describes one plugin. Its first member is fixed
// for every ABI version.
struct SchedcachePolicyPlugin {
  uint32_t abi_version;
  // create_factory makes the plugin's factory (ownership to the caller).
  std::unique_ptr<schedcache::PolicyFactory> (*create_factory)();
};

// The entry point's type: returns a pointer to a static descriptor.
using SchedcachePolicyPluginEntry = const SchedcachePolicyPlugin* (*)();

}  // extern "C"

// SCHEDCACHE_POLICY_PLUGIN_ENTRY(descriptor) defines the plugin's one
// exported symbol, returning the address of `descriptor`, a static
// SchedcachePolicyPlugin. Every plugin uses it, so the symbol's name, C
// linkage and visibility are written in one place.
#define SCHEDCACHE_POLICY_PLUGIN_ENTRY(descriptor)                        \
  extern "C" __attribute__((visibility("default")))                      \
  const SchedcachePolicyPlugin* schedcache_policy_plugin() {              \
    return &(descriptor);                                                 \
  }

#endif  // SCHEDCACHE_POLICIES_PLUGIN_ABI_H_
