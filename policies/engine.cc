#include "policies/engine.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "policies/model_context.h"
#include "policies/process_table.h"
#include "policies/stats.h"

namespace schedcache {
namespace {

// PolicySlot is one policy of the session, with its statistics.
struct PolicySlot {
  PolicySlot(std::string name_in, std::unique_ptr<Policy> policy_in,
             int max_cpus, int max_llcs)
      : name(std::move(name_in)),
        policy(std::move(policy_in)),
        stats(max_cpus, max_llcs) {}

  std::string name;
  std::unique_ptr<Policy> policy;
  std::vector<int32_t> pref_llc;  // by process slot, last value seen
  PolicyStats stats;
};

// InvalidField is the error for an event field out of its range, e.g.
// "tgid 0 must be > 0". Out of line and cold, so the event path carries no
// message building.
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status InvalidField(
    absl::string_view field, int64_t value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", value, " ", rule));
}

// HandOverIdsError rejects a hand-over that is neither a thread nor idle.
ABSL_ATTRIBUTE_NOINLINE ABSL_ATTRIBUTE_COLD absl::Status HandOverIdsError(
    int32_t tgid, int32_t tid) {
  return absl::InvalidArgumentError(
      absl::StrCat("hand-over tgid ", tgid, " tid ", tid,
                   ": both must be > 0, or both 0 for idle"));
}

absl::Status ValidateOptions(const EngineOptions& options) {
  RETURN_IF_ERROR(
      ValidateTunables(ModelTunables::Specs(), options.model.ToValues()));
  if (options.max_processes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_processes = ", options.max_processes, " must be at least 1"));
  }
  return absl::OkStatus();
}

}  // namespace

class Engine::Impl {
 public:
  Impl(std::shared_ptr<const Topology> topology, EngineOptions options)
      : options_(options),
        context_(std::move(topology), options.model),
        processes_(context_.num_cpu_slots(), options.max_processes,
                   options.model.epoch_period_ns),
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
  uint64_t ApplyBatch(
      absl::Span<const Event> events,
      absl::FunctionRef<void(size_t, const absl::Status&)> on_reject) {
    uint64_t applied = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& event = events[i];
      // Samples first: they are nearly every event.
      absl::Status status;
      if (const Sample* sample = std::get_if<Sample>(&event)) {
        status = ApplySample(*sample);
      } else if (const HandOver* handover = std::get_if<HandOver>(&event)) {
        status = ApplyHandOver(*handover);
      } else {
        status = ApplyProcessExit(std::get<ProcessExit>(event));
      }
      if (status.ok()) {
        ++applied;
      } else {
        on_reject(i, status);
      }
    }
    return applied;
  }
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
  // and at most max_clock_jump_ns ahead of the session clock (DESIGN §1,
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
  // REQUIRES: ValidateClock(timestamp_ns) is OK.
  int64_t Clock(int64_t timestamp_ns) {
    if (!context_.started()) {
      context_.Start(timestamp_ns);
      now_ = timestamp_ns;
    }
    now_ = std::max(now_, timestamp_ns);
    return now_;
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
  // where it had a preferred LLC, a change to none with `reason` (which the
  // report does not count as a policy's change: the policy chose nothing),
  // then the policy's state, then the table's record.
  void RemoveProcess(uint32_t slot, NoPreferenceReason reason, int64_t now);
  // NotePreference records `preference`, the policy's for `slot` after a
  // call that may change it. The engine keeps only its LLC: a change, the
  // agreement and the runtime on the preferred LLC are all by LLC.
  void NotePreference(PolicySlot& policy, uint32_t slot,
                      const Preference& preference, int64_t now) {
    if (preference.llc != policy.pref_llc[slot]) {
      ++policy.stats.preferred_llc_changes;
      ChangePreference(policy, slot, preference, now);
    }
  }
  // ChangePreference stores `preference`'s LLC for `slot` and tells the
  // listener.
  void ChangePreference(PolicySlot& policy, uint32_t slot,
                        const Preference& preference, int64_t now);
  // RunTrigger runs one scan trigger through every policy, with statistics
  // and agreement; outcomes land in outcomes_.
  template <typename Fn>
  void RunTrigger(uint32_t slot, const ThreadRef& thread, int64_t now,
                  Fn&& run);
  // Tick is the kernel's task_tick_cache for `thread` of the process in
  // `slot` (on thread.cpu): a scan trigger when the process's epoch is
  // behind the CPU's. Out of line: one sample in hundreds is a tick.
  ABSL_ATTRIBUTE_NOINLINE void Tick(uint32_t slot, const ThreadRef& thread,
                                    int64_t now);

  const EngineOptions options_;
  ModelContext context_;                 // outlives policies_
  std::vector<PolicySlot> policies_;
  std::vector<CpuGate> cpu_gates_;  // by CPU os index
  int64_t now_ = 0;
  ProcessTable processes_;
  // No process is idle while the clock is at or before this (see
  // EvictIdle); the first event sets it. The largest value: no timeout.
  int64_t idle_check_after_ns_;
  uint32_t slots_prepared_ = 0;  // slots every pref_llc covers
  std::vector<ScanOutcome> outcomes_;
  std::function<void(const PreferenceChange&)> listener_;
  std::function<void(const ScanObservation&)> scan_listener_;
  uint64_t samples_applied_ = 0;
  uint64_t handovers_applied_ = 0;
  uint64_t exits_applied_ = 0;
  uint64_t processes_evicted_ = 0;  // started processes evicted
};

absl::Status Engine::Impl::CpuError(int32_t cpu, int64_t timestamp_ns) const {
  // The rejection's reason, checked in the order the messages name.
  if (!context_.topology().HasCpu(cpu)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpu ", cpu, " is not a CPU of topology ", context_.topology().source()));
  }
  if (!context_.online().Test(cpu)) {
    return absl::InvalidArgumentError(absl::StrCat("cpu ", cpu, " is offline"));
  }
  const int64_t last = cpu_gates_[cpu].last_timestamp;
  return absl::InvalidArgumentError(
      absl::StrCat("timestamp_ns ", timestamp_ns, " is before cpu ", cpu,
                   "'s previous timestamp ", last));
}

absl::Status Engine::Impl::ClockError(int64_t timestamp_ns) const {
  if (timestamp_ns < 0 || timestamp_ns > ModelContext::kMaxTimestampNs) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp_ns ", timestamp_ns, " is outside [0, ",
                     ModelContext::kMaxTimestampNs, "]"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "timestamp_ns ", timestamp_ns, " is ", timestamp_ns - now_,
      " ns ahead of the session clock ", now_, "; max_clock_jump_ns is ",
      options_.model.max_clock_jump_ns));
}

absl::Status Engine::Impl::ValidateRecommendTime(int64_t timestamp_ns) const {
  if (timestamp_ns == 0 ||
      (timestamp_ns >= now_ &&
       timestamp_ns - now_ <= options_.model.max_clock_jump_ns)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "timestamp_ns ", timestamp_ns, " is outside [", now_, ", ",
      now_ + options_.model.max_clock_jump_ns,
      "]: the session clock and max_clock_jump_ns past it (0 means the "
      "clock)"));
}

absl::Status Engine::Impl::NumaNodeError(int32_t numa_node) const {
  return absl::InvalidArgumentError(absl::StrCat(
      "numa_node ", numa_node, " is not an online NUMA node of topology ",
      context_.topology().source()));
}

void Engine::Impl::PrepareSlot(uint32_t slot) {
  // A slot below slots_prepared_ is clean when reused: RemoveProcess reset
  // it.
  for (PolicySlot& policy : policies_) policy.pref_llc.resize(slot + 1, -1);
  slots_prepared_ = slot + 1;
}

void Engine::Impl::Evict(uint32_t slot, int64_t now) {
  if (processes_.process(slot).started) ++processes_evicted_;
  RemoveProcess(slot, NoPreferenceReason::kEvicted, now);
}

void Engine::Impl::EvictIdleProcesses(int64_t now) {
  const int64_t timeout = options_.model.process_idle_timeout_ns;
  int64_t oldest_sample_ns = now;
  while (!processes_.empty()) {
    const uint32_t oldest = processes_.least_recently_sampled();
    oldest_sample_ns = processes_.process(oldest).last_sample_ns;
    if (now - oldest_sample_ns <= timeout) break;
    Evict(oldest, now);
    oldest_sample_ns = now;
  }
  // Both terms are at most 2^62, so the sum may reach 2^63: saturate.
  if (__builtin_add_overflow(oldest_sample_ns, timeout,
                             &idle_check_after_ns_)) {
    idle_check_after_ns_ = std::numeric_limits<int64_t>::max();
  }
}

void Engine::Impl::RemoveProcess(uint32_t slot, NoPreferenceReason reason,
                                 int64_t now) {
  for (PolicySlot& policy : policies_) {
    if (policy.pref_llc[slot] != -1) {
      ChangePreference(policy, slot, Preference{-1, -1, reason}, now);
    }
    policy.policy->Forget(slot);
  }
  processes_.Remove(slot, context_);
}

void Engine::Impl::ChangePreference(PolicySlot& policy, uint32_t slot,
                                    const Preference& preference,
                                    int64_t now) {
  const int old = policy.pref_llc[slot];
  policy.pref_llc[slot] = preference.llc;
  if (listener_) {
    listener_(PreferenceChange{processes_.process(slot).tgid, policy.name, old,
                               preference.llc, preference.cpu,
                               preference.reason, now});
  }
}

void Engine::Impl::ForEachPreference(
    absl::FunctionRef<void(const CurrentPreference&)> fn) const {
  for (uint32_t slot = 0; slot < slots_prepared_; ++slot) {
    const ProcessState& p = processes_.process(slot);
    if (!p.started) continue;
    for (size_t i = 0; i < policies_.size(); ++i) {
      fn(CurrentPreference{p.tgid, static_cast<int>(i),
                           policies_[i].policy->CurrentPreference(slot)});
    }
  }
}

template <typename Fn>
void Engine::Impl::RunTrigger(uint32_t slot, const ThreadRef& thread,
                              int64_t now, Fn&& run) {
  outcomes_.resize(policies_.size());
  for (size_t i = 0; i < policies_.size(); ++i) {
    PolicySlot& policy = policies_[i];
    const ScanOutcome outcome = run(*policy.policy);
    outcomes_[i] = outcome;
    policy.stats.RecordScan(outcome);
    const Preference preference = policy.policy->CurrentPreference(slot);
    if (outcome.kind == ScanOutcome::Kind::kExecuted && scan_listener_) {
      const ProcessState& p = processes_.process(slot);
      scan_listener_(ScanObservation{
          static_cast<int>(i), p.tgid, thread.tid, thread.cpu, now,
          outcome.cost.cpus_scanned, p.comm.view(), outcome.cost.llcs_scanned,
          outcome.cost.scan_ns, preference.llc, outcome.llc_occupancy});
    }
    NotePreference(policy, slot, preference, now);
  }
  // A decision is a trigger where the reference did not skip (DESIGN §1);
  // a reference that never scans (`none`) decides at every trigger.
  if (outcomes_[0].skipped()) return;
  const int reference_llc = policies_[0].pref_llc[slot];
  for (PolicySlot& policy : policies_) {
    ++policy.stats.decisions;
    if (policy.pref_llc[slot] == reference_llc) ++policy.stats.agreements;
  }
}

void Engine::Impl::Tick(uint32_t slot, const ThreadRef& thread, int64_t now) {
  // Kernel task_tick_cache; the scan runs at the tick's own timestamp.
  ProcessState& p = processes_.process(slot);
  const int64_t cpu_epoch = context_.rq(thread.cpu).cpu_epoch;
  if (!TickScans(p.epoch, cpu_epoch)) return;
  p.epoch = cpu_epoch;
  const ProcessRef process = processes_.RefOf(slot);
  RunTrigger(slot, thread, now, [&](Policy& policy) {
    return policy.Scan(process, thread, now);
  });
}

// ApplySample and ApplyHandOver are `inline`, as always_inline requires:
// the library is position-independent code, and GCC inlines no function
// that another object could interpose.
inline absl::Status Engine::Impl::ApplySample(const Sample& s) {
  RETURN_IF_ERROR(ValidateCpu(s.cpu, s.timestamp_ns));
  RETURN_IF_ERROR(ValidateClock(s.timestamp_ns));
  if (s.tgid <= 0) return InvalidField("tgid", s.tgid, "must be > 0");
  if (s.tid <= 0) return InvalidField("tid", s.tid, "must be > 0");
  if (s.delta_ns < 0) {
    return InvalidField("delta_ns", s.delta_ns, "must not be negative");
  }
  if (s.nr_threads != kUnchangedNrThreads && s.nr_threads < 1) {
    return InvalidField("nr_threads", s.nr_threads, "must be >= 1");
  }
  if (s.numa_node != kUnchangedNumaNode && s.numa_node != -1 &&
      context_.node_span(s.numa_node).Empty()) {
    return NumaNodeError(s.numa_node);
  }
  if (s.footprint_pages != kUnchangedFootprint && s.footprint_pages < 0) {
    return InvalidField("footprint_pages", s.footprint_pages,
                        "must not be negative");
  }

  const int64_t now = Clock(s.timestamp_ns);
  EvictIdle(now);
  cpu_gates_[s.cpu].last_timestamp = s.timestamp_ns;
  const ProcessTable::Admission admission = Admit(s.tgid, s.tid, now);
  const uint32_t slot = admission.slot;
  ProcessState& p = processes_.process(slot);
  if (s.nr_threads != kUnchangedNrThreads) p.nr_threads = s.nr_threads;
  if (s.footprint_pages != kUnchangedFootprint) {
    p.footprint_pages = s.footprint_pages;
  }
  if (!s.comm.empty()) p.comm = s.comm;
  ThreadState& t =
      processes_.SwitchIn(slot, admission.thread, s.cpu, context_);
  if (s.numa_node != kUnchangedNumaNode) t.numa_node = s.numa_node;

  // Every sample decays its CPU to its time: a process starts at its first
  // sample, whatever the delta, with that CPU's epoch (DESIGN §1); decay
  // composes exactly, so this changes no other result.
  context_.Advance(s.cpu, now);
  RqState& rq = context_.mutable_rq(s.cpu);
  processes_.NoteSample(slot, admission.thread, rq.cpu_epoch, now);
  const ProcessRef process = processes_.RefOf(slot);
  const ThreadRef thread{s.tid, t.numa_node, s.cpu};
  if (s.delta_ns > 0) {
    const int llc = context_.llc_of(s.cpu);
    const auto delta = static_cast<uint64_t>(s.delta_ns);
    for (PolicySlot& policy : policies_) {
      NotePreference(policy, slot,
                     policy.policy->Account(process, thread, s.delta_ns, now),
                     now);
      policy.stats.runtime_total = AddRuntime(policy.stats.runtime_total, delta);
      if (policy.pref_llc[slot] == llc) {
        policy.stats.runtime_on_preferred_llc =
            AddRuntime(policy.stats.runtime_on_preferred_llc, delta);
      }
    }
    rq.cpu_runtime = AddRuntime(rq.cpu_runtime, delta);
  }
  if (s.tick && options_.trigger == ScanTrigger::kTick) Tick(slot, thread, now);
  if (!s.tick) processes_.SwitchOut(s.cpu, context_);
  ++samples_applied_;
  return absl::OkStatus();
}

inline absl::Status Engine::Impl::ApplyHandOver(const HandOver& h) {
  RETURN_IF_ERROR(ValidateCpu(h.cpu, h.timestamp_ns));
  RETURN_IF_ERROR(ValidateClock(h.timestamp_ns));
  const bool idle = h.tgid == 0 && h.tid == 0;
  if (!idle && (h.tgid <= 0 || h.tid <= 0)) {
    return HandOverIdsError(h.tgid, h.tid);
  }
  const int64_t now = Clock(h.timestamp_ns);
  EvictIdle(now);
  cpu_gates_[h.cpu].last_timestamp = h.timestamp_ns;
  if (idle) {
    processes_.SwitchOut(h.cpu, context_);
  } else {
    // The thread gets a record so rq.curr stays exact, but a hand-over
    // never starts its process (DESIGN §1).
    const ProcessTable::Admission admission = Admit(h.tgid, h.tid, now);
    processes_.SwitchIn(admission.slot, admission.thread, h.cpu, context_);
  }
  ++handovers_applied_;
  return absl::OkStatus();
}

absl::Status Engine::Impl::ApplyProcessExit(const ProcessExit& exit) {
  RETURN_IF_ERROR(ValidateClock(exit.timestamp_ns));
  if (exit.tgid <= 0) return InvalidField("tgid", exit.tgid, "must be > 0");
  const int64_t now = Clock(exit.timestamp_ns);
  EvictIdle(now);
  // A process known only from hand-overs has no preference, but its
  // threads may be current on a CPU: its record goes too.
  const uint32_t slot = processes_.FindRecord(exit.tgid);
  if (slot != ProcessTable::kNoSlot) {
    RemoveProcess(slot, NoPreferenceReason::kExited, now);
  }
  ++exits_applied_;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PolicyDecision>> Engine::Impl::Recommend(
    const RecommendRequest& request) {
  const uint32_t slot = processes_.Find(request.tgid);
  if (slot == ProcessTable::kNoSlot) {
    return absl::NotFoundError(
        absl::StrCat("process tgid ", request.tgid, " is not tracked"));
  }
  const ProcessState& p = processes_.process(slot);
  const int32_t tid = request.tid.value_or(p.last_tid);
  const ThreadState* known = processes_.FindThread(slot, tid);
  if (known == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tid ", tid, " is not a known thread of process ", request.tgid));
  }
  ThreadRef thread{tid, known->numa_node, known->cpu};
  if (request.cpu.has_value()) {
    if (!context_.topology().HasCpu(*request.cpu) ||
        !context_.online().Test(*request.cpu)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu ", *request.cpu, " is not an online CPU"));
    }
    thread.cpu = *request.cpu;
  }
  RETURN_IF_ERROR(ValidateRecommendTime(request.timestamp_ns));
  outcomes_.assign(policies_.size(), ScanOutcome{});
  // A scan request stands in for the tick (DESIGN §1): decay the thread's
  // CPU, raise the process's epoch to that CPU's (never lower it), scan.
  // The process's record is final before the scan, so one ProcessRef
  // serves the scan and the decisions.
  int64_t now = now_;
  if (request.scan) {
    now = Clock(request.timestamp_ns != 0 ? request.timestamp_ns : now_);
    context_.Advance(thread.cpu, now);
    ProcessState& state = processes_.process(slot);
    state.epoch = std::max(state.epoch, context_.rq(thread.cpu).cpu_epoch);
  }
  const ProcessRef process = processes_.RefOf(slot);
  if (request.scan) {
    RunTrigger(slot, thread, now, [&](Policy& policy) {
      return policy.Scan(process, thread, now);
    });
  }
  std::vector<PolicyDecision> decisions;
  for (size_t i = 0; i < policies_.size(); ++i) {
    PolicyDecision d = policies_[i].policy->Decide(
        process, request.tid.has_value() ? &thread : nullptr);
    d.policy = policies_[i].name;
    d.nr_threads = process.nr_threads;
    d.footprint_pages = process.footprint_pages;
    d.scanned_now = outcomes_[i].kind == ScanOutcome::Kind::kExecuted;
    decisions.push_back(std::move(d));
  }
  return decisions;
}

EngineReport Engine::Impl::Report() const {
  EngineReport report;
  for (const PolicySlot& policy : policies_) {
    report.policies.push_back(policy.stats.Summarize(policy.name));
  }
  report.samples_applied = samples_applied_;
  report.handovers_applied = handovers_applied_;
  report.exits_applied = exits_applied_;
  report.processes_tracked = processes_.size();
  report.processes_evicted = processes_evicted_;
  return report;
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    std::shared_ptr<const Topology> topology, const PolicyRegistry& registry,
    std::vector<PolicyChoice> policies, EngineOptions options) {
  if (topology == nullptr) {
    return absl::InvalidArgumentError("engine needs a topology");
  }
  if (policies.empty()) {
    return absl::InvalidArgumentError("a session needs at least one policy");
  }
  RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>(std::move(topology), options);
  absl::flat_hash_set<std::string> seen;
  for (const PolicyChoice& choice : policies) {
    const PolicyFactory* factory = registry.Find(choice.name);
    if (factory == nullptr) {
      std::vector<std::string> known;
      for (const PolicyFactory* f : registry.factories()) {
        known.emplace_back(f->name());
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy '", choice.name,
                       "'; known: ", absl::StrJoin(known, ", ")));
    }
    if (!seen.insert(choice.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("policy '", choice.name, "' is listed twice"));
    }
    RETURN_IF_ERROR(impl->AddPolicy(*factory, choice.tunables));
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

absl::Status Engine::ApplySample(const Sample& sample) {
  return impl_->ApplySample(sample);
}
absl::Status Engine::ApplyHandOver(const HandOver& handover) {
  return impl_->ApplyHandOver(handover);
}
absl::Status Engine::ApplyProcessExit(const ProcessExit& exit) {
  return impl_->ApplyProcessExit(exit);
}
uint64_t Engine::ApplyBatch(
    absl::Span<const Event> events,
    absl::FunctionRef<void(size_t, const absl::Status&)> on_reject) {
  return impl_->ApplyBatch(events, on_reject);
}
absl::StatusOr<std::vector<PolicyDecision>> Engine::Recommend(
    const RecommendRequest& request) {
  return impl_->Recommend(request);
}
EngineReport Engine::Report() const { return impl_->Report(); }
uint64_t Engine::processes_tracked() const {
  return impl_->processes_tracked();
}
uint64_t Engine::processes_evicted() const {
  return impl_->processes_evicted();
}
void Engine::ForEachPolicyStats(
    absl::FunctionRef<void(std::string_view, const PolicyStats&)> visit) const {
  impl_->ForEachPolicyStats(visit);
}
void Engine::ForEachPreference(
    absl::FunctionRef<void(const CurrentPreference&)> fn) const {
  impl_->ForEachPreference(fn);
}
int64_t Engine::now() const { return impl_->now(); }
void Engine::SetChangeListener(
    std::function<void(const PreferenceChange&)> listener) {
  impl_->set_listener(std::move(listener));
}
void Engine::SetScanListener(
    std::function<void(const ScanObservation&)> listener) {
  impl_->set_scan_listener(std::move(listener));
}
const Topology& Engine::topology() const { return impl_->context().topology(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
std::vector<std::string> Engine::policy_names() const {
  return impl_->policy_names();
}
bool Engine::enabled() const { return impl_->context().enabled(); }

}  // namespace schedcache
