// Engine::Impl, the session engine's state and its methods, shared by
// engine.cc (set-up, Recommend, reports, listeners) and engine_apply.cc
// (the event path). Private to policies/: nothing outside includes it.
#ifndef SCHEDCACHE_POLICIES_ENGINE_IMPL_H_
#define SCHEDCACHE_POLICIES_ENGINE_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "policies/engine.h"
#include "policies/model_context.h"
#include "policies/policy.h"
#include "policies/process_table.h"
#include "policies/stats.h"

namespace schedcache {
namespace engine_internal {

// PolicySlot is one policy of the session, with its statistics.
struct PolicySlot {
  PolicySlot(std::string name_in, std::unique_ptr<Policy> policy_in,
             int max_cpus, int max_llcs)
      : name(std::move(name_in)),
        policy(std::move(policy_in)),
        observer(dynamic_cast<KernelDecisionObserver*>(policy.get())),
        stats(max_cpus, max_llcs) {}

  std::string name;
  std::unique_ptr<Policy> policy;
  // The policy as a KernelDecisionObserver; null when it is not one.
  KernelDecisionObserver* observer;
  std::vector<int32_t> pref_llc;  // by cache group slot, last value seen
  // By process slot: agreement with the kernel (docs/MODEL.md); `scans`
  // counts from the process's start, decisions or not.
  std::vector<KernelProcessCounts> kernel;
  PolicyStats stats;
};

}  // namespace engine_internal

class Engine::Impl {
 public:
  using PolicySlot = engine_internal::PolicySlot;

  Impl(std::shared_ptr<const Topology> topology, EngineOptions options)
      : options_(options),
        context_(std::move(topology), options.model),
        // One epoch of the clock, in ns (at most 2^32 jiffies of at most
        // 1 s: no overflow).
        processes_(context_.num_cpu_slots(), options.max_processes,
                   options.model.epoch_period() * options.model.tick_ns()),
        idle_check_after_ns_(options.model.process_idle_timeout_ns > 0
                                 ? std::numeric_limits<int64_t>::min()
                                 : std::numeric_limits<int64_t>::max()) {
    cpu_gates_.assign(context_.num_cpu_slots(), CpuGate{});
    context_.online().ForEach([&](int cpu) {
      if (context_.topology().HasCpu(cpu)) cpu_gates_[cpu].accepted = true;
    });
  }

  absl::Status AddPolicy(const PolicyFactory& factory,
                         const TunableValues& tunables) {
    RETURN_IF_ERROR(factory.Validate(tunables));
    policies_.emplace_back(std::string(factory.name()),
                           factory.Create(context_, tunables),
                           context_.topology().max_cpu() + 1,
                           static_cast<int>(context_.topology().llcs().size()));
    if (policies_.back().policy == nullptr) {
      return absl::InternalError(absl::StrCat(
          "policy ", std::string(factory.name()), " created no instance"));
    }
    return absl::OkStatus();
  }

  // ApplySample and ApplyHandOver are forced inline: ApplyBatch takes
  // them in, so the status of an accepted event is never built in memory
  // and the calls' entry and exit (a fifth of a hand-over's instructions)
  // go away.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status ApplySample(const Sample& sample);
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status ApplyHandOver(
      const HandOver& handover);
  absl::Status ApplyProcessExit(const ProcessExit& exit);
  absl::Status ApplyProcessStart(const ProcessStart& start);
  absl::Status ApplyKernelDecision(const KernelDecision& decision);
  uint64_t ApplyBatch(
      absl::Span<const Event> events,
      absl::FunctionRef<void(size_t, const absl::Status&)> on_reject);
  absl::StatusOr<std::vector<PolicyDecision>> Recommend(
      const RecommendRequest& request);
  EngineReport Report() const;
  uint64_t processes_tracked() const { return processes_.size(); }
  uint64_t processes_evicted() const { return processes_evicted_; }
  void ForEachPolicyStats(
      absl::FunctionRef<void(std::string_view, const PolicyStats&)> visit)
      const {
    for (const PolicySlot& policy : policies_) visit(policy.name, policy.stats);
  }
  void ForEachPreference(
      absl::FunctionRef<void(const CurrentPreference&)> fn) const;
  int64_t now() const { return now_; }

  const EngineOptions& options() const { return options_; }
  const ModelContext& context() const { return context_; }
  std::vector<std::string> policy_names() const {
    std::vector<std::string> names;
    for (const PolicySlot& p : policies_) names.push_back(p.name);
    return names;
  }
  void set_listener(std::function<void(const PreferenceChange&)> listener) {
    listener_ = std::move(listener);
  }
  void set_scan_listener(std::function<void(const ScanObservation&)> listener) {
    scan_listener_ = std::move(listener);
  }

 private:
  // CpuGate is what validating an event's CPU needs, kept together so the
  // check is one load: whether events may name the CPU (it exists and is
  // online) and the CPU's latest timestamp.
  struct CpuGate {
    int64_t last_timestamp = std::numeric_limits<int64_t>::min();
    bool accepted = false;
  };

  // ValidateCpu accepts an event on `cpu` at `timestamp_ns`; inline, as
  // every event passes it.
  absl::Status ValidateCpu(int32_t cpu, int64_t timestamp_ns) const {
    if (static_cast<uint32_t>(cpu) < cpu_gates_.size() &&
        cpu_gates_[cpu].accepted &&
        timestamp_ns >= cpu_gates_[cpu].last_timestamp) {
      return absl::OkStatus();
    }
    return CpuError(cpu, timestamp_ns);
  }
  // CpuError is the reason ValidateCpu rejects an event.
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status CpuError(
      int32_t cpu, int64_t timestamp_ns) const;
  // ValidateClock accepts an event's timestamp: within the model's range,
  // and at most max_clock_jump_ns ahead of the session clock (docs/MODEL.md,
  // one session clock), so one bad value cannot age the whole session.
  absl::Status ValidateClock(int64_t timestamp_ns) const {
    if (timestamp_ns >= 0 && timestamp_ns <= ModelContext::kMaxTimestampNs &&
        (!context_.started() ||
         timestamp_ns - now_ <= options_.model.max_clock_jump_ns)) {
      return absl::OkStatus();
    }
    return ClockError(timestamp_ns);
  }
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status ClockError(
      int64_t timestamp_ns) const;
  // ValidateRecommendTime accepts a Recommend's timestamp (0: the clock),
  // which must lie in [clock, clock + max_clock_jump_ns].
  absl::Status ValidateRecommendTime(int64_t timestamp_ns) const;
  // NumaNodeError rejects a sample's numa_node that names no online node.
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status NumaNodeError(
      int32_t numa_node) const;
  // Clock moves the session's clock: the model's time is the latest
  // timestamp seen, so decay only ever moves forward and composes exactly.
  // The clock's jiffy (jiffies_, the policies' `now`) follows it until a
  // sample carries the kernel's own jiffies (TakeKernelJiffies); from then
  // on only those move it (docs/MODEL.md, Time in jiffies).
  // REQUIRES: ValidateClock(timestamp_ns) is OK.
  int64_t Clock(int64_t timestamp_ns) {
    if (!context_.started()) {
      now_ = timestamp_ns;
      if (!kernel_jiffies_) SetJiffies();
      context_.Start(jiffies_);
    }
    if (timestamp_ns > now_) {
      now_ = timestamp_ns;
      if (!kernel_jiffies_ && now_ >= next_jiffy_ns_) SetJiffies();
    }
    return now_;
  }
  // SetJiffies computes the jiffy of now_ and when the next one begins, so
  // that the clock divides once per jiffy, not once per event.
  void SetJiffies() {
    const JiffyClock& clock = context_.jiffy_clock();
    jiffies_ = clock.JiffyAt(now_);
    next_jiffy_ns_ = clock.FirstTickAtOrAfter(now_ + 1);
  }
  // ValidateJiffies accepts a sample's `jiffies`: kDerivedJiffies, or in
  // [0, ModelContext::kMaxJiffies] and at most max_clock_jump_ns' worth of
  // jiffies ahead of the session's jiffy, as a timestamp may move the
  // clock (a value behind it is taken as the session's jiffy: the kernel's
  // counter is one and never goes back).
  absl::Status ValidateJiffies(int64_t jiffies) const {
    if (jiffies == kDerivedJiffies ||
        (jiffies >= 0 && jiffies <= ModelContext::kMaxJiffies &&
         (!context_.started() ||
          jiffies - jiffies_ <=
              options_.model.max_clock_jump_ns / options_.model.tick_ns()))) {
      return absl::OkStatus();
    }
    return JiffiesError(jiffies);
  }
  ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status JiffiesError(
      int64_t jiffies) const;
  // TakeKernelJiffies makes the kernel's `jiffies`, as a sample carries
  // them, the session's jiffy, which never moves back; before the session
  // starts, its first jiffy. REQUIRES: ValidateJiffies(jiffies) is OK and
  // jiffies is not kDerivedJiffies.
  void TakeKernelJiffies(int64_t jiffies) {
    jiffies_ = std::max(jiffies_, jiffies);
    kernel_jiffies_ = true;
  }
  // Admit finds or admits process `tgid` and its thread `tid` at `now`;
  // when the table is full, the least recently sampled process is evicted
  // to make room.
  ProcessTable::Admission Admit(int32_t tgid, int32_t tid, int64_t now) {
    ProcessTable::Admission admission = processes_.Admit(tgid, tid, now);
    if (admission.slot == ProcessTable::kNoSlot) {
      Evict(processes_.least_recently_sampled(), now);
      admission = processes_.Admit(tgid, tid, now);
    }
    if (admission.slot >= slots_prepared_) PrepareSlot(admission.slot);
    return admission;
  }
  // PrepareSlot sizes the policies' per-slot records for a new slot.
  void PrepareSlot(uint32_t slot);
  // Evict removes the process in `slot` with reason kEvicted and counts it
  // when it had started. Out of line: the table is rarely full.
  ABSL_ATTRIBUTE_NOINLINE void Evict(uint32_t slot, int64_t now);
  // EvictIdle evicts every process whose last sample is more than
  // process_idle_timeout_ns before `now`; every event that moves the
  // clock calls it. The oldest last sample never moves back (a sample or
  // an admission is at the clock, a removal drops one), so a bound taken
  // from it stays a bound: until the clock passes idle_check_after_ns_ no
  // process can be idle, and the common case is one compare, not a walk
  // to the oldest process's record.
  void EvictIdle(int64_t now) {
    if (now > idle_check_after_ns_) EvictIdleProcesses(now);
  }
  // EvictIdleProcesses evicts the idle processes, oldest first, then sets
  // idle_check_after_ns_ from the oldest that remains (or from `now` when
  // none does: a later admission is at the clock).
  ABSL_ATTRIBUTE_NOINLINE void EvictIdleProcesses(int64_t now);
  // RemoveProcess forgets the process in `slot` everywhere: for each policy
  // where its group had a preferred LLC, a change to none with `reason`
  // for the process (which the report does not count as a policy's
  // change: the policy chose nothing), then it leaves its group (which
  // ends when it was the last member), then the table's record goes.
  void RemoveProcess(uint32_t slot, NoPreferenceReason reason, int64_t now);
  // LeaveGroup takes the process in `slot` out of its cache group; a group
  // left with no member ends: its preference is forgotten without a change
  // (its members had theirs) and every policy forgets its state.
  void LeaveGroup(uint32_t slot);
  // ApplyGroupOfSample applies the cache group `id` a sample on `cpu`
  // names for the process in `slot`, after the sample's attributes: a
  // membership change when it is not the process's group, else a named
  // group's sums brought up to them. Returns the slot of the process's
  // group.
  uint32_t ApplyGroupOfSample(uint32_t slot, uint64_t id, int32_t cpu,
                              int64_t now);
  // ChangeGroup moves the process in `slot` to cache group `id`
  // (docs/MODEL.md, Cache groups) at a sample on `cpu`: it leaves its
  // group, joins `id` (created at `cpu`'s epoch when it does not exist;
  // the process's own group is always created afresh) and takes nothing
  // with it; each policy under which the group's preferred LLC differs
  // from the one it had reports a change for the process.
  void ChangeGroup(uint32_t slot, uint64_t id, int32_t cpu, int64_t now);
  // NotePreference records `preference`, the policy's for the cache group
  // in `group` after a call that may change it. The engine keeps only its
  // LLC: a change, the agreement and the runtime on the preferred LLC are
  // all by LLC.
  void NotePreference(PolicySlot& policy, uint32_t group,
                      const Preference& preference, int64_t now) {
    if (preference.llc != policy.pref_llc[group]) {
      ++policy.stats.preferred_llc_changes;
      ChangePreference(policy, group, preference, now);
    }
  }
  // ApplyGroupedSample is ApplySample's part for sample `s` when it or the
  // process in `slot` names a cache group: the membership
  // (ApplyGroupOfSample), the pending work of the sampled thread `t` (so
  // ApplySample finds none), and the named group's runtime (below).
  // Returns the slot of the process's group. Out of line: the default path
  // never calls it.
  ABSL_ATTRIBUTE_NOINLINE uint32_t ApplyGroupedSample(const Sample& s,
                                                      uint32_t slot,
                                                      ThreadState& t,
                                                      bool switched_in,
                                                      int64_t now);
  // CountGroupRuntime charges `delta` ns run on `llc` to the named cache
  // group in `group` (docs/MODEL.md, Cache groups), and per policy to its
  // runtime on the preferred LLC when the policy prefers `llc` for it now.
  // The policies' Account calls for the sample come after; a preference
  // they change is settled by ChangePreference (group_sample_), so the sum
  // ends as if tested after them, as the policy totals are.
  void CountGroupRuntime(uint32_t group, int llc, uint64_t delta);
  // SettleGroupRuntime moves the sample in group_sample_ on or off
  // `policy`'s runtime on the preferred LLC of its group, whose preferred
  // LLC changed from `old_llc` to `new_llc` during the sample's Account.
  void SettleGroupRuntime(const PolicySlot& policy, int old_llc, int new_llc);
  // StartGroupRuntime points the named group `id` just created in `group`
  // at its totals, which a previous life of `id` may have left.
  void StartGroupRuntime(uint32_t group, uint64_t id);
  // EndGroupRuntime keeps the totals of the named group in `group`, which
  // ends, while fewer than kMaxEndedCacheGroups ended ones are kept; past
  // that they are dropped and counted in group_runtimes_left_out_.
  void EndGroupRuntime(uint32_t group);
  // GroupRuntimes is the report's cache_groups, sorted by id.
  std::vector<CacheGroupRuntime> GroupRuntimes() const;
  // CountScan counts one scan (executed or aborted) of the process in
  // `slot` by `policy` toward the agreement with the kernel.
  void CountScan(PolicySlot& policy, uint32_t slot) {
    ++policy.kernel[slot].scans;
    if (kernel_seen_[slot]) ++policy.stats.kernel_process_scans;
  }
  // NoteKernelSeen marks the process in `slot` as one the kernel decided
  // for: from now on every policy's scans of it count, and so do those it
  // had before.
  void NoteKernelSeen(uint32_t slot);
  // KernelReportOf is the process in `slot`'s KernelProcessReport.
  KernelProcessReport KernelReportOf(uint32_t slot) const;
  // ChangePreference stores `preference`'s LLC for the cache group in
  // `group` and tells the listener, once per member.
  void ChangePreference(PolicySlot& policy, uint32_t group,
                        const Preference& preference, int64_t now);
  // Notify tells the listener that the process in `slot` went from
  // `old_llc` to `preference` under `policy`.
  void Notify(const PolicySlot& policy, uint32_t slot, int old_llc,
              const Preference& preference, int64_t now);
  // RunTrigger runs one scan trigger of the process in `slot`, for its
  // cache group in `group`, through every policy, with statistics and
  // agreement; outcomes land in outcomes_.
  template <typename Fn>
  void RunTrigger(uint32_t slot, uint32_t group, const ThreadRef& thread,
                  int64_t now, Fn&& run);
  // Tick is the kernel's task_tick_cache for `thread` (record `t`) of the
  // process in `slot` (on thread.cpu): when its cache group's epoch is
  // behind the CPU's and no work of the thread is pending, it queues the
  // scan work, which runs at once, or at the thread's next switch-in when
  // the tick `preempted` it. Out of line: one sample in hundreds is a tick.
  ABSL_ATTRIBUTE_NOINLINE void Tick(uint32_t slot, ThreadState& t,
                                    const ThreadRef& thread, int64_t now,
                                    bool preempted);
  // RunWork is the kernel's task_cache_work for `thread` of the process in
  // `slot`, for its cache group, at the session's jiffy: one scan trigger.
  void RunWork(uint32_t slot, const ThreadRef& thread, int64_t now);
  // RunPendingWork runs the work thread `t` of `slot` left pending when a
  // tick preempted it, now that it is switched in on `cpu`.
  void RunPendingWork(uint32_t slot, ThreadState& t, int32_t cpu,
                      int64_t now);

  const EngineOptions options_;
  ModelContext context_;                 // outlives policies_
  std::vector<PolicySlot> policies_;
  std::vector<CpuGate> cpu_gates_;  // by CPU os index
  int64_t now_ = 0;
  int64_t jiffies_ = 0;        // the jiffy of now_ (docs/MODEL.md)
  int64_t next_jiffy_ns_ = 0;  // when the jiffy after jiffies_ begins
  // A sample carried the kernel's jiffies: jiffies_ no longer follows now_.
  bool kernel_jiffies_ = false;
  ProcessTable processes_;
  // No process is idle while the clock is at or before this (see
  // EvictIdle); the first event sets it. The largest value: no timeout.
  int64_t idle_check_after_ns_;
  uint32_t slots_prepared_ = 0;  // slots every pref_llc covers
  // By process slot: the kernel decided for the process (1) or not (0).
  std::vector<uint8_t> kernel_seen_;
  // The kernel's processes that ended, at most kMaxEndedKernelProcesses.
  std::vector<KernelProcessReport> ended_kernel_processes_;
  // GroupRuntime is one named cache group id's CacheGroupRuntime as the
  // engine counts it (the sums saturate at UINT64_MAX, then are reported
  // capped at INT64_MAX).
  struct GroupRuntime {
    uint64_t runtime_ns = 0;
    std::vector<uint64_t> on_preferred_llc_ns;  // by policy
  };
  // By named group id, live or ended; the values do not move, so
  // group_runtime_of_ may point at them.
  absl::flat_hash_map<uint64_t, std::unique_ptr<GroupRuntime>> group_runtimes_;
  // By slot: the named group's totals there; null for a process's own group
  // and for a free slot.
  std::vector<GroupRuntime*> group_runtime_of_;
  size_t ended_group_runtimes_ = 0;  // entries of group_runtimes_ not live
  // GroupSample is the grouped sample being accounted: the named group's
  // slot (kNoSlot: none), the sample's number (samples_applied_ then: a
  // later event finds it stale), its LLC and runtime.
  struct GroupSample {
    uint32_t group = ProcessTable::kNoSlot;
    uint64_t sample = 0;
    int llc = -1;
    uint64_t delta = 0;
  };
  GroupSample group_sample_;
  uint64_t group_runtimes_left_out_ = 0;
  std::vector<ScanOutcome> outcomes_;
  std::vector<int> old_llcs_;  // scratch for ChangeGroup, by policy
  std::function<void(const PreferenceChange&)> listener_;
  std::function<void(const ScanObservation&)> scan_listener_;
  uint64_t samples_applied_ = 0;
  uint64_t handovers_applied_ = 0;
  uint64_t exits_applied_ = 0;
  uint64_t starts_applied_ = 0;
  uint64_t processes_evicted_ = 0;  // started processes evicted
  uint64_t kernel_decisions_applied_ = 0;
  uint64_t kernel_decisions_unmatched_ = 0;
};

template <typename Fn>
void Engine::Impl::RunTrigger(uint32_t slot, uint32_t group,
                              const ThreadRef& thread, int64_t now, Fn&& run) {
  outcomes_.resize(policies_.size());
  for (size_t i = 0; i < policies_.size(); ++i) {
    PolicySlot& policy = policies_[i];
    const ScanOutcome outcome = run(*policy.policy);
    outcomes_[i] = outcome;
    policy.stats.RecordScan(outcome);
    if (outcome.kind == ScanOutcome::Kind::kExecuted ||
        outcome.kind == ScanOutcome::Kind::kAborted) {
      CountScan(policy, slot);
    }
    const Preference preference = policy.policy->CurrentPreference(group);
    if (outcome.kind == ScanOutcome::Kind::kExecuted && scan_listener_) {
      const ProcessState& p = processes_.process(slot);
      scan_listener_(ScanObservation{
          static_cast<int>(i), p.tgid, thread.tid, thread.cpu, now,
          outcome.cost.cpus_scanned, p.comm.view(), outcome.cost.llcs_scanned,
          outcome.cost.scan_ns, preference.llc, outcome.llc_occupancy,
          p.cache_group});
    }
    NotePreference(policy, group, preference, now);
  }
  // A decision is a trigger where the reference did not skip (docs/MODEL.md);
  // a reference that never scans (`none`) decides at every trigger.
  if (outcomes_[0].skipped()) return;
  const int reference_llc = policies_[0].pref_llc[group];
  for (PolicySlot& policy : policies_) {
    ++policy.stats.decisions;
    if (policy.pref_llc[group] == reference_llc) ++policy.stats.agreements;
  }
}

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_ENGINE_IMPL_H_
