// Engine: one session's model. It owns the per-CPU runqueue state of
// docs/MODEL.md, The model (shared by every policy of the session), one
// instance of each policy, and the statistics behind GetReport. Samples are
// applied in order, so a replay is deterministic.
//
// Thread contract: thread-compatible. A session serialises all calls (one
// writer); the Engine itself takes no locks.
#ifndef SCHEDCACHE_POLICIES_ENGINE_H_
#define SCHEDCACHE_POLICIES_ENGINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "events/event.h"
#include "policies/decision.h"
#include "policies/policy_registry.h"
#include "policies/stats.h"
#include "policies/tunables.h"
#include "topology/topology.h"

namespace schedcache {

// ScanTrigger says what runs a scan: the kernel's tick (kTick), or only a
// Recommend that asks for one (kQuery).
enum class ScanTrigger { kTick, kQuery };

// PolicyChoice names one policy of a session and its own tunables.
struct PolicyChoice {
  std::string name;       // registry name, e.g. "full-scan"
  TunableValues tunables; // the policy's own tunables; defaults when absent
};

struct EngineOptions {
  ModelTunables model;                 // docs/MODEL.md tunables
  ScanTrigger trigger = ScanTrigger::kTick;
  // Beyond this many processes the least recently sampled one is evicted
  // (processes, not cache groups: a named group ends with its last member).
  int64_t max_processes = 1'000'000;
};

// RecommendRequest asks for the preference of process `tgid`; with `tid`
// (and optionally `cpu`, the CPU that thread is on) the answer is for that
// thread (NUMA preference, scan mask). With `scan`, a fresh scan runs first
// (in kQuery mode it stands in for the tick, docs/MODEL.md, "Details pinned
// down").
struct RecommendRequest {
  int32_t tgid = 0;
  std::optional<int32_t> tid;
  std::optional<int32_t> cpu;
  bool scan = false;
  int64_t timestamp_ns = 0;  // 0: the session's latest sample time
};

// PreferenceChange is one change of a process's preferred LLC under one
// policy, reported as it happens. A process that exits or is evicted while
// it has a preferred LLC ends with a change to none, reason kExited or
// kEvicted. Policies decide per cache group (docs/MODEL.md, Cache groups):
// a group's change is reported once per member process; a process that
// changes group changes to its new group's preference (when that differs),
// with the new group's reason when it has none.
struct PreferenceChange {
  int32_t tgid = 0;
  std::string_view policy;  // valid during the callback only
  int old_llc = -1;         // -1: none
  int new_llc = -1;         // -1: none
  int new_cpu = -1;         // the preferred CPU in new_llc; -1: none
  // Why new_llc is -1; kNone when it is not.
  NoPreferenceReason reason = NoPreferenceReason::kNoData;
  int64_t timestamp_ns = 0;  // the session clock at the event that caused it
  // The process's cache group (Sample::cache_group) after the change;
  // kOwnCacheGroup: its own.
  uint64_t cache_group = kOwnCacheGroup;
};

// CurrentPreference is one policy's preference for one tracked process, as
// Engine::ForEachPreference reports it.
struct CurrentPreference {
  int32_t tgid;
  int policy;  // index in session order
  Preference preference;  // its cache group's
  uint64_t cache_group = kOwnCacheGroup;  // the process's; 0: its own
};

// ScanObservation is one executed scan of one policy, reported as it
// happens (for per-scan traces and exact histograms; the report keeps only
// summaries).
struct ScanObservation {
  int policy;               // index in session order
  int32_t tgid;
  int32_t tid;              // the scanning thread
  int cpu;                  // the CPU it scanned from
  int64_t timestamp_ns;
  int cpus_scanned;
  std::string_view comm;    // the process's last comm; valid during the callback only
  // Defaults, so that code listing only the fields above still builds
  // under -Wmissing-field-initializers.
  int llcs_scanned = 0;
  int64_t scan_ns = 0;      // wall time of the scan (ScanCost::scan_ns)
  int preferred_llc = -1;   // the policy's preferred LLC after the scan; -1: none
  // The scan's per-LLC occupancy (ScanOutcome::llc_occupancy); valid during
  // the callback only.
  absl::Span<const LlcOccupancy> llc_occupancy = {};
  // The cache group the scan was for, `tgid`'s (kOwnCacheGroup: its own).
  uint64_t cache_group = kOwnCacheGroup;
};

class Engine {
 public:
  // Create builds an engine over `topology` with `policies` (the first is the
  // reference for agreement). Returns InvalidArgument when a policy name is
  // unknown, repeats, or its tunables fail validation, or when `policies` is
  // empty.
  static absl::StatusOr<std::unique_ptr<Engine>> Create(
      std::shared_ptr<const Topology> topology, const PolicyRegistry& registry,
      std::vector<PolicyChoice> policies, EngineOptions options);
  ~Engine();

  // ApplySample validates then applies one sample. On InvalidArgument
  // (naming the field and value: CPU not in topology or offline, tgid/tid
  // not > 0, negative delta, timestamp before the CPU's previous one) the
  // engine is unchanged. A sample whose cache_group differs from its
  // process's group moves the process there first (docs/MODEL.md, Cache
  // groups): a membership change, never an error.
  absl::Status ApplySample(const Sample& sample);
  // ApplyHandOver validates then applies a hand-over, same contract.
  absl::Status ApplyHandOver(const HandOver& handover);
  // ApplyProcessExit forgets process `tgid` and its threads (a thread of it
  // current on a CPU stops being current): for each policy where its group
  // had a preferred LLC, a change to none with reason kExited; the process
  // leaves its cache group, which ends with its last member. A tgid the session
  // does not know is accepted and changes nothing but the clock.
  // InvalidArgument (engine unchanged) for tgid not > 0 or a timestamp the
  // session clock refuses; a later sample of the tgid starts a new process.
  absl::Status ApplyProcessExit(const ProcessExit& exit);
  // ApplyProcessStart starts the group of process `tgid` as the kernel's
  // sched_cache_group_init does at a fork with a new mm or an exec
  // (docs/MODEL.md, Time in jiffies): a process the session tracks is
  // forgotten first, as at ApplyProcessExit (reason kExited); the process
  // then starts, tracked, in a fresh group of its own (whatever group it
  // was in before) with the group epoch taken here (the last CPU's
  // cpu_epoch as it stands), not its first sample's CPU's. Its thread tgid
  // is known but has run nowhere: Recommend for it is FailedPrecondition.
  // InvalidArgument (engine unchanged) for tgid not > 0 or a timestamp the
  // session clock refuses.
  absl::Status ApplyProcessStart(const ProcessStart& start);
  // ApplyKernelDecision validates then applies one decision of the running
  // kernel: InvalidArgument (engine unchanged) naming the field and value
  // for a CPU or timestamp that ApplySample would refuse, tgid/tid not > 0,
  // or a preferred_cpu neither -1 nor a CPU of the topology. It moves the
  // session clock like any event. For a process the session tracks it is
  // handed to every policy that observes the kernel (KernelDecisionObserver,
  // the `kernel` policy) and counted toward every policy's agreement with
  // the kernel (docs/MODEL.md); for any other it starts nothing and is
  // counted in EngineReport::kernel_decisions_unmatched.
  absl::Status ApplyKernelDecision(const KernelDecision& decision);
  // ApplyBatch applies `events` in order, each exactly as ApplySample,
  // ApplyHandOver, ApplyProcessExit or ApplyKernelDecision would: a rejected event leaves the
  // engine unchanged and the rest still apply; `on_reject` hears the index
  // and error of each.
  // Returns the number of events applied. One call per batch instead of
  // per event, for streams of millions of events.
  uint64_t ApplyBatch(
      absl::Span<const Event> events,
      absl::FunctionRef<void(size_t index, const absl::Status& error)>
          on_reject);

  // Recommend answers for every policy, in session order, with the
  // preference of the process's cache group, which each decision names
  // (PolicyDecision::cache_group). NotFound (with the
  // tgid) for a process the session does not track; InvalidArgument for a
  // bad tid/cpu; FailedPrecondition for a thread that has run on no CPU yet
  // (a process ApplyProcessStart started, before its first sample or
  // hand-over).
  absl::StatusOr<std::vector<PolicyDecision>> Recommend(
      const RecommendRequest& request);

  // Report summarises every policy, in session order.
  EngineReport Report() const;
  // processes_tracked is Report().processes_tracked without building the
  // report.
  uint64_t processes_tracked() const;
  // processes_evicted is Report().processes_evicted, the same way.
  uint64_t processes_evicted() const;
  // ForEachPolicyStats calls `visit` with every policy's name and the
  // statistics Report summarises, in session order: for readers that need
  // more than the summaries (the histograms' buckets of server/metrics).
  void ForEachPolicyStats(
      absl::FunctionRef<void(std::string_view name, const PolicyStats& stats)>
          visit) const;
  // ForEachPreference calls `fn` once per tracked process and policy with
  // the preference of its cache group (the one its changes were reported
  // from), processes in slot order, policies in session order.
  // The engine's clock is now().
  void ForEachPreference(
      absl::FunctionRef<void(const CurrentPreference&)> fn) const;
  // now is the session clock: the latest timestamp applied.
  int64_t now() const;

  // SetChangeListener installs the callback for PreferenceChange events; it
  // runs synchronously inside ApplySample/Recommend, so it must be quick and
  // must not call back into the engine.
  void SetChangeListener(std::function<void(const PreferenceChange&)> listener);
  // SetScanListener installs the callback for every executed scan, with the
  // same contract as SetChangeListener.
  void SetScanListener(std::function<void(const ScanObservation&)> listener);

  const Topology& topology() const;
  const EngineOptions& options() const;
  std::vector<std::string> policy_names() const;
  // enabled is false when `enable` is auto and no NUMA node has 2 LLCs, or
  // `enable` is off; cache-aware policies then never scan, and say why.
  bool enabled() const;

 private:
  class Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_ENGINE_H_
