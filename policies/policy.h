// Policy and PolicyFactory: the plugin interface of schedcache. A Policy
// chooses a preferred LLC per cache group (docs/MODEL.md, Cache groups):
// by default each process is its own group, and a group named by samples
// is one unit for all its member processes, which every call's ProcessRef
// describes (slot, summed thread count and footprint, epoch) and whose
// preference every member reports. The session's Engine drives it with
// runtime samples (Account) and scan triggers (Scan: ticks and scan
// requests). The per-CPU runqueue state is not the policy's: it lives once per
// session in the ModelContext every policy reads, and the engine keeps its
// current threads (rq.curr, with their group) up to date on every
// hand-over and membership change. Each policy owns its per-group decision
// state, indexed by the dense ProcessRef::slot the engine assigns.
//
// A PolicyFactory has three jobs (as gRPC's LB policy factories): name and
// describe the policy, validate its tunables before any instance exists, and
// create instances.
//
// Thread contract: a Policy is thread-compatible and driven by one writer; a
// PolicyFactory is immutable and safe for concurrent access.
#ifndef SCHEDCACHE_POLICIES_POLICY_H_
#define SCHEDCACHE_POLICIES_POLICY_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "events/event.h"
#include "policies/decision.h"
#include "policies/model_context.h"
#include "policies/tunables.h"

namespace schedcache {

class Policy {
 public:
  virtual ~Policy() = default;

  // Account: thread `thread` of a member of `process` ran `delta_ns` (> 0) on
  // thread.cpu up to `now`, the session clock in jiffies, as every `now`
  // here (docs/MODEL.md, "Time in jiffies"). The engine has advanced that CPU's rq to `now`,
  // and charges the delta to rq.cpu_runtime once, after every policy's
  // Account. Returns the group's preference after the account (what
  // CurrentPreference would return), so the engine sees a change without
  // asking again.
  virtual Preference Account(const ProcessRef& process, const ThreadRef& thread,
                             int64_t delta_ns, int64_t now) = 0;

  // Scan: a scan trigger for `thread` of a member of `process`, which runs
  // on thread.cpu (whose rq the engine has advanced to `now`). The engine
  // decides the triggers, the same for every policy: a tick in a new epoch
  // of the group (kernel task_tick_cache; tick trigger mode only), or a
  // Recommend that asks for a scan; it has raised ProcessRef::epoch first.
  // Returns what the policy did (kNoScan for one that never scans).
  virtual ScanOutcome Scan(const ProcessRef& process, const ThreadRef& thread,
                           int64_t now) = 0;

  // CurrentPreference is the preference of the group in `slot` (LLC -1
  // and a reason for none). Cheap: the engine calls it after every scan
  // trigger.
  virtual Preference CurrentPreference(uint32_t slot) const = 0;

  // Decide is the current answer for `process`, or for `thread` of a member
  // of it when given. The engine fills PolicyDecision::policy, scanned_now,
  // nr_threads, footprint_pages and cache_group.
  virtual PolicyDecision Decide(const ProcessRef& process,
                                const ThreadRef* thread) const = 0;

  // Forget drops the state of the group in `slot` (it ended: its last
  // member exited, was evicted, exec'd or moved to another group); the
  // slot may then be reused for another group.
  virtual void Forget(uint32_t slot) = 0;
};

// KernelObservation is what a policy made of one kernel decision.
struct KernelObservation {
  Preference preference;  // the process's preference after it
  // The policy counts the kernel's scan as its own executed scan (the
  // `kernel` policy, whose scans are the kernel's).
  bool counts_scan = false;
};

// KernelDecisionObserver is implemented, besides Policy, by a policy that
// takes the running kernel's decisions (events/event.h KernelDecision) as
// input. It is not a virtual of Policy so that Policy's vtable, which .so
// plugins compile against (plugin_abi.h), stays as it is: the engine asks
// each policy once, when it creates it, whether it is also an observer.
// One that is not (the model policies, every plugin) is never told of a
// decision: its preference stays what its own scans made it, and the
// engine still measures its agreement with the kernel (docs/MODEL.md).
class KernelDecisionObserver {
 public:
  virtual ~KernelDecisionObserver() = default;

  // ObserveKernelDecision: the kernel's task_cache_work returned `decision`
  // for `process`, which the session tracks, at `now`.
  virtual KernelObservation ObserveKernelDecision(
      const ProcessRef& process, const KernelDecision& decision,
      int64_t now) = 0;
};

class PolicyFactory {
 public:
  virtual ~PolicyFactory() = default;

  // name is the registry name, lower-kebab (e.g. "full-scan").
  virtual std::string_view name() const = 0;
  // description is one line for ListPolicies.
  virtual std::string_view description() const = 0;
  // tunables lists the policy's own tunables with defaults and ranges.
  virtual std::vector<TunableSpec> tunables() const = 0;

  // Validate checks `values` against tunables(). Returns InvalidArgument
  // naming the policy, the tunable and its allowed range.
  absl::Status Validate(const TunableValues& values) const;

  // Create makes an instance over `model`, which outlives it.
  // REQUIRES: Validate(values).ok().
  virtual std::unique_ptr<Policy> Create(ModelContext& model,
                                         const TunableValues& values) const = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_POLICY_H_
