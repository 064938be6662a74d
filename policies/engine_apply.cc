// The engine's event path: the batch loop, samples, hand-overs, process
// starts and exits, kernel decisions, ticks, admission and eviction.
#include <cstdint>
#include <limits>
#include <variant>

#include "absl/base/attributes.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "events/event.h"
#include "policies/engine.h"
#include "policies/engine_impl.h"

namespace schedcache {
namespace {

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

}  // namespace

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

absl::Status Engine::Impl::JiffiesError(int64_t jiffies) const {
  if (jiffies < 0 || jiffies > ModelContext::kMaxJiffies) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jiffies ", jiffies, " is outside [0, ", ModelContext::kMaxJiffies,
        "] (", kDerivedJiffies, ": derived from timestamp_ns)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "jiffies ", jiffies, " is ", jiffies - jiffies_,
      " jiffies ahead of the session's jiffy ", jiffies_,
      "; max_clock_jump_ns allows ",
      options_.model.max_clock_jump_ns / options_.model.tick_ns(),
      " (does the session's clock anchor match the kernel's?)"));
}

absl::Status Engine::Impl::NumaNodeError(int32_t numa_node) const {
  return absl::InvalidArgumentError(absl::StrCat(
      "numa_node ", numa_node, " is not an online NUMA node of topology ",
      context_.topology().source()));
}

void Engine::Impl::PrepareSlot(uint32_t slot) {
  // A slot below slots_prepared_ is clean when reused: RemoveProcess reset
  // it.
  for (PolicySlot& policy : policies_) {
    policy.pref_llc.resize(slot + 1, -1);
    policy.kernel.resize(slot + 1);
  }
  kernel_seen_.resize(slot + 1, 0);
  group_runtime_of_.resize(slot + 1, nullptr);
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
  if (kernel_seen_[slot] &&
      ended_kernel_processes_.size() < kMaxEndedKernelProcesses) {
    ended_kernel_processes_.push_back(KernelReportOf(slot));
  }
  kernel_seen_[slot] = 0;
  const uint32_t group = processes_.process(slot).group;
  for (PolicySlot& policy : policies_) {
    policy.kernel[slot] = KernelProcessCounts{};
    if (const int llc = policy.pref_llc[group]; llc != -1) {
      Notify(policy, slot, llc, Preference{-1, -1, reason}, now);
    }
  }
  LeaveGroup(slot);
  processes_.Remove(slot, context_);
}

void Engine::Impl::Tick(uint32_t slot, ThreadState& t,
                        const ThreadRef& thread, int64_t now,
                        bool preempted) {
  // The scan may change a preference, which is not the sample's Account.
  group_sample_.group = ProcessTable::kNoSlot;
  // Kernel task_tick_cache: task_cache_work is queued only when it is not
  // pending, and the group's epoch moves only then; it runs at the
  // return to user space, after the next switch-in for a preempted thread.
  if (t.work_pending) return;
  ProcessState& group = processes_.process(processes_.process(slot).group);
  const int64_t cpu_epoch = context_.rq(thread.cpu).cpu_epoch;
  if (!TickScans(group.epoch, cpu_epoch)) return;
  group.epoch = cpu_epoch;
  if (preempted) {
    t.work_pending = true;
    return;
  }
  RunWork(slot, thread, now);
}

void Engine::Impl::RunWork(uint32_t slot, const ThreadRef& thread,
                           int64_t now) {
  const uint32_t group = processes_.process(slot).group;
  const ProcessRef process = processes_.RefOf(group);
  const int64_t jiffies = jiffies_;
  RunTrigger(slot, group, thread, now, [&](Policy& policy) {
    return policy.Scan(process, thread, jiffies);
  });
}

void Engine::Impl::RunPendingWork(uint32_t slot, ThreadState& t, int32_t cpu,
                                  int64_t now) {
  t.work_pending = false;
  RunWork(slot, ThreadRef{t.tid, t.numa_node, cpu}, now);
}

// ApplySample, ApplyHandOver and ApplyBatch are `inline`: always_inline
// requires it (the library is position-independent code, and GCC inlines
// no function that another object could interpose), and so Engine's
// ApplyBatch takes the batch loop in.
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
  RETURN_IF_ERROR(ValidateJiffies(s.jiffies));

  if (s.jiffies != kDerivedJiffies) TakeKernelJiffies(s.jiffies);
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
  const bool grouped = (s.cache_group | p.cache_group) != kOwnCacheGroup;
  const ThreadState& before = processes_.thread(admission.thread);
  const bool switched_in = !before.current || before.cpu != s.cpu;
  ThreadState& t =
      processes_.SwitchIn(slot, admission.thread, s.cpu, context_);
  if (s.numa_node != kUnchangedNumaNode) t.numa_node = s.numa_node;

  // Every sample decays its CPU to its time: a process starts at its first
  // sample, whatever the delta, with that CPU's epoch (docs/MODEL.md); decay
  // composes exactly, so this changes no other result.
  context_.Advance(s.cpu, jiffies_);
  RqState& rq = context_.mutable_rq(s.cpu);
  processes_.NoteSample(slot, admission.thread, rq.cpu_epoch, now);
  // By default the sample and the process both name its own group, whose
  // slot and record are the process's, and this is the one test cache
  // groups cost (docs/MODEL.md, Cache groups). process.slot is the group's.
  ProcessRef process = processes_.RefOf(slot);
  if (grouped) [[unlikely]] {
    process = processes_.RefOf(ApplyGroupedSample(s, slot, t, switched_in, now));
  }
  // Without a hand-over, a thread's first sample after it was switched out
  // is where it is known to have been switched in again (the work changes
  // nothing `process` holds).
  if (t.work_pending && switched_in) RunPendingWork(slot, t, s.cpu, now);
  const ThreadRef thread{s.tid, t.numa_node, s.cpu};
  if (s.delta_ns > 0) {
    const int llc = context_.llc_of(s.cpu);
    const auto delta = static_cast<uint64_t>(s.delta_ns);
    for (PolicySlot& policy : policies_) {
      NotePreference(policy, process.slot,
                     policy.policy->Account(process, thread, s.delta_ns,
                                          jiffies_),
                     now);
      policy.stats.runtime_total = AddRuntime(policy.stats.runtime_total, delta);
      if (policy.pref_llc[process.slot] == llc) {
        policy.stats.runtime_on_preferred_llc =
            AddRuntime(policy.stats.runtime_on_preferred_llc, delta);
      }
    }
    rq.cpu_runtime = AddRuntime(rq.cpu_runtime, delta);
  }
  if (s.tick && options_.trigger == ScanTrigger::kTick) {
    Tick(slot, t, thread, now, s.preempted);
  }
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
    // never starts its process (docs/MODEL.md).
    const ProcessTable::Admission admission = Admit(h.tgid, h.tid, now);
    ThreadState& t =
        processes_.SwitchIn(admission.slot, admission.thread, h.cpu, context_);
    if (t.work_pending) {
      context_.Advance(h.cpu, jiffies_);
      RunPendingWork(admission.slot, t, h.cpu, now);
    }
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

absl::Status Engine::Impl::ApplyProcessStart(const ProcessStart& start) {
  RETURN_IF_ERROR(ValidateClock(start.timestamp_ns));
  if (start.tgid <= 0) return InvalidField("tgid", start.tgid, "must be > 0");
  const int64_t now = Clock(start.timestamp_ns);
  EvictIdle(now);
  // An exec replaces the group: the old one ends as at an exit. A record
  // known only from hand-overs has no group state, and keeps its threads'
  // CPUs (rq.curr).
  const uint32_t old = processes_.FindRecord(start.tgid);
  if (old != ProcessTable::kNoSlot && processes_.process(old).started) {
    RemoveProcess(old, NoPreferenceReason::kExited, now);
  }
  // The group exists from here, as the kernel's does: the process is
  // tracked, and a kernel decision before its first sample (the work a
  // tick queued before the exec runs at its return, on the new group)
  // counts for it. The kernel's sched_cache_group_init: the group's epoch
  // is the cpu_epoch of the last possible CPU as that rq holds it, not
  // brought up to date (stale on an idle CPU); its next_scan is `jiffies`,
  // which the policies' start value 0 matches, since every later trigger
  // runs at a jiffy at or after this one (docs/MODEL.md, Time in
  // jiffies). After an exec the task leads its process: its tid is the
  // tgid.
  const int64_t epoch =
      context_.rq(context_.topology().max_cpu()).cpu_epoch;
  const ProcessTable::Admission admission = Admit(start.tgid, start.tgid, now);
  ProcessState& p = processes_.process(admission.slot);
  processes_.Start(admission.slot, epoch);
  if (p.last_tid == 0) p.last_tid = start.tgid;
  ++starts_applied_;
  return absl::OkStatus();
}

void Engine::Impl::NoteKernelSeen(uint32_t slot) {
  kernel_seen_[slot] = 1;
  for (PolicySlot& policy : policies_) {
    policy.stats.kernel_process_scans += policy.kernel[slot].scans;
  }
}

absl::Status Engine::Impl::ApplyKernelDecision(const KernelDecision& d) {
  RETURN_IF_ERROR(ValidateCpu(d.cpu, d.timestamp_ns));
  RETURN_IF_ERROR(ValidateClock(d.timestamp_ns));
  if (d.tgid <= 0) return InvalidField("tgid", d.tgid, "must be > 0");
  if (d.tid <= 0) return InvalidField("tid", d.tid, "must be > 0");
  if (d.preferred_cpu != -1 && !context_.topology().HasCpu(d.preferred_cpu)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "preferred_cpu ", d.preferred_cpu,
        " must be -1 or a CPU of topology ", context_.topology().source()));
  }
  const int64_t now = Clock(d.timestamp_ns);
  EvictIdle(now);
  cpu_gates_[d.cpu].last_timestamp = d.timestamp_ns;
  ++kernel_decisions_applied_;
  // A decision starts nothing: the model knows a process from its samples.
  const uint32_t slot = processes_.Find(d.tgid);
  if (slot == ProcessTable::kNoSlot) {
    ++kernel_decisions_unmatched_;
    return absl::OkStatus();
  }
  if (!kernel_seen_[slot]) NoteKernelSeen(slot);
  // docs/MODEL.md "Agreement with the kernel": each policy's preferred LLC
  // right after the decision against the LLC of the kernel's preferred CPU.
  // The process's counts are its own; the preference is its group's.
  const int kernel_llc =
      d.preferred_cpu < 0 ? -1 : context_.topology().LlcOf(d.preferred_cpu);
  const uint32_t group = processes_.process(slot).group;
  const ProcessRef process = processes_.RefOf(group);
  for (PolicySlot& policy : policies_) {
    if (policy.observer != nullptr) {
      const KernelObservation seen =
          policy.observer->ObserveKernelDecision(process, d, now);
      NotePreference(policy, group, seen.preference, now);
      if (seen.counts_scan) {
        ++policy.stats.scans;
        CountScan(policy, slot);
      }
    }
    ++policy.stats.kernel_decisions;
    if (!d.scanned) continue;
    KernelProcessCounts& counts = policy.kernel[slot];
    ++policy.stats.kernel_scans;
    ++counts.kernel_scans;
    if (policy.pref_llc[group] == kernel_llc) {
      ++policy.stats.kernel_agreements;
      ++counts.agreements;
    }
  }
  return absl::OkStatus();
}

inline uint64_t Engine::Impl::ApplyBatch(
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
    } else if (const ProcessExit* exit = std::get_if<ProcessExit>(&event)) {
      status = ApplyProcessExit(*exit);
    } else if (const ProcessStart* start = std::get_if<ProcessStart>(&event)) {
      status = ApplyProcessStart(*start);
    } else {
      status = ApplyKernelDecision(std::get<KernelDecision>(event));
    }
    if (status.ok()) {
      ++applied;
    } else {
      on_reject(i, status);
    }
  }
  return applied;
}

absl::Status Engine::ApplySample(const Sample& sample) {
  return impl_->ApplySample(sample);
}
absl::Status Engine::ApplyHandOver(const HandOver& handover) {
  return impl_->ApplyHandOver(handover);
}
absl::Status Engine::ApplyProcessExit(const ProcessExit& exit) {
  return impl_->ApplyProcessExit(exit);
}
absl::Status Engine::ApplyProcessStart(const ProcessStart& start) {
  return impl_->ApplyProcessStart(start);
}
absl::Status Engine::ApplyKernelDecision(const KernelDecision& decision) {
  return impl_->ApplyKernelDecision(decision);
}
uint64_t Engine::ApplyBatch(
    absl::Span<const Event> events,
    absl::FunctionRef<void(size_t, const absl::Status&)> on_reject) {
  return impl_->ApplyBatch(events, on_reject);
}

}  // namespace schedcache
