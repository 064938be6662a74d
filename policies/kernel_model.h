// The kernel model of docs/MODEL.md, The model: decay, occupancy, account,
// tick, scan, scan_mask, invalid_nr and exceeds_capacity, mirrored from
// kernel/sched/fair.c (CONFIG_SCHED_CACHE). This is the only implementation;
// full-scan and visited-scan are this model with a different ScanScope, and
// other policies may reuse its pieces.
//
// Thread contract: thread-compatible; KernelModel keeps scratch masks, so one
// instance serves one policy instance.
#ifndef SCHEDCACHE_POLICIES_KERNEL_MODEL_H_
#define SCHEDCACHE_POLICIES_KERNEL_MODEL_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "policies/decision.h"
#include "policies/model_context.h"
#include "topology/cpu_set.h"

namespace schedcache {

// CpuEntry is one process's state on one CPU it ran on (kernel: struct
// sched_cache_time). Entries are created lazily, when the CPU first runs the
// process: {epoch = cpu_epoch, runtime = 0} is what the kernel's eager
// initialisation decays to, so sparse storage costs no fidelity; for the
// same reason an entry decayed to runtime 0 is dropped (unless visited-scan
// holds it as visited) when the process moves to a new CPU. 24 bytes:
// a process holds one per CPU it ran on, in every cache-aware policy.
struct CpuEntry {
  // kMaxVisitLag caps visit_lag; every lag that large is past any
  // affinity_timeout_epochs (at most 10^6), so the cap changes no result.
  static constexpr uint32_t kMaxVisitLag = (uint32_t{1} << 31) - 1;

  int32_t cpu = 0;
  // visited-scan only. visited: in MmState::visited_entries. visit_lag:
  // the kernel's epoch_last_visit kept as `epoch` minus it, in 31 bits
  // where the epoch itself needs 64 (it is 0 when an account visits, and
  // a scan adds the epochs its catch-up moves `epoch` by).
  uint32_t visited : 1 = 0;
  uint32_t visit_lag : 31 = 0;
  int64_t epoch = 0;
  uint64_t runtime = 0;  // decayed ns
};
static_assert(sizeof(CpuEntry) == 24);

// CatchUpEntry is the per-process half of decay() (kernel
// __update_mm_sched): the entry follows its CPU's epoch. Inline: every
// account and every occupied CPU of a scan calls it.
inline void CatchUpEntry(const RqState& rq, CpuEntry& entry) {
  const int64_t n = rq.cpu_epoch - entry.epoch;
  if (n <= 0) return;
  entry.epoch += n;
  entry.runtime = ShiftDecay(entry.runtime, n);
}

// OccupancyRatio is fraction_mm_sched's arithmetic: NICE_0_LOAD * runtime /
// (cpu_runtime + 1), computed in 128 bits so it never wraps. Inline: a scan
// calls it for every CPU the process occupies.
inline uint64_t OccupancyRatio(uint64_t runtime, uint64_t cpu_runtime) {
  // Decayed runtimes stay far below 2^44 ns (4.9 hours), so the product
  // fits 64 bits and a 64-bit division gives the same quotient as the
  // 128-bit one at a fraction of its cost; the 128-bit path keeps the
  // result exact for any input.
  constexpr uint64_t kMax64BitRuntime = ~uint64_t{0} / kNice0Load;
  if (runtime <= kMax64BitRuntime && cpu_runtime < ~uint64_t{0}) {
    return runtime * kNice0Load / (cpu_runtime + 1);
  }
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(kNice0Load) * runtime;
  return static_cast<uint64_t>(
      scaled / (static_cast<unsigned __int128>(cpu_runtime) + 1));
}

// MmState is one policy's state for one cache group, by default one
// process (kernel: the sched_cache_group, but for `epoch`, which
// ProcessRef carries; docs/MODEL.md, Cache groups). A default MmState is the kernel's
// start state: no preference, and next_scan (jiffies) at or before the
// first sample, so the first scan may run at once (the kernel's new group
// has next_scan = jiffies at its creation, docs/MODEL.md).
struct MmState {
  NoPreferenceReason reason = NoPreferenceReason::kNoData;
  int32_t pref_cpu = -1;
  int32_t last_nr_running = 0;  // evidence of the last executed scan
  // last_occupancy_sparse: see last_occupancy.
  bool last_occupancy_sparse = false;
  int64_t next_scan = 0;
  int64_t nr_running_avg = 0;
  std::vector<CpuEntry> cpus;   // sorted by cpu, only CPUs it ran on
  // visited_entries is visited-scan's set, kept sparse: the indexes in
  // `cpus` of exactly the entries marked `visited`, increasing (so in CPU
  // order). A scan then costs the same on any machine for the same visited
  // set (a whole-machine mask would make every set operation of a 4096-CPU
  // scan walk 64 words), and reaches each entry without searching `cpus`.
  std::vector<uint32_t> visited_entries;
  // last_occupancy is the evidence of the last executed scan: each LLC it
  // examined, in its order. A full-scan over every online CPU examines
  // every online LLC in one fixed order, mostly with nothing there, so it
  // keeps only the LLCs of nonzero occupancy (last_occupancy_sparse);
  // storing each of a 384-CPU machine's 24 LLCs would cost every process
  // 384 bytes. KernelModel::Evidence gives the full list either way.
  std::vector<LlcOccupancy> last_occupancy;
  ScanCost last_cost;
};

// ScanScope is the one difference between full-scan and visited-scan.
enum class ScanScope {
  kAllCpus,      // mainline: every CPU of every LLC in the scan mask
  kVisitedCpus,  // the visited-cpus series (v6): only visited_cpus
};

class KernelModel {
 public:
  // `context` must outlive the model.
  KernelModel(ModelContext& context, ScanScope scope);

  // Account charges `delta_ns` (> 0) that `process` ran on `cpu` (kernel
  // account_mm_sched); a process starts with a default MmState, so there is
  // nothing to start here. The thread's own preferred LLC is
  // derived on demand, see ThreadPreferredLlc. REQUIRES: `cpu` is online
  // (the engine takes events on online CPUs only) and the engine advanced
  // rq `cpu` to `now`; it adds the delta to rq.cpu_runtime itself, once for
  // all policies. Inline (below the class): every sample of every
  // policy runs it.
  void Account(MmState& mm, const ProcessRef& process, int cpu,
               int64_t delta_ns);

  // Scan is the kernel's task_cache_work, gated by mm.next_scan, at jiffy
  // `now` (as every `now` of the model: docs/MODEL.md, "Time in jiffies").
  // The engine calls it at every scan trigger (a tick in a new epoch of
  // the process, or a query's scan request), after raising
  // ProcessRef::epoch.
  ScanOutcome Scan(MmState& mm, const ProcessRef& process,
                   const ThreadRef& thread, int64_t now);

  // Occupancy decays then returns the process's share of `cpu` (kernel
  // fraction_mm_sched); visited-scan evicts a CPU not visited for more than
  // affinity_timeout_epochs, after the decay (v6 order).
  uint64_t Occupancy(MmState& mm, int cpu, int64_t now);

  // InvalidNr is the kernel's invalid_llc_nr for the LLC of `cpu`.
  bool InvalidNr(const MmState& mm, const ProcessRef& process, int cpu) const;
  // ExceedsCapacity is the kernel's exceed_llc_capacity for the LLC of
  // `cpu`, against the capacity the constructor computed. Inline: every
  // account asks.
  bool ExceedsCapacity(const ProcessRef& process, int cpu) const {
    return capacity_bounded_ &&
           capacity_bytes_[cpu] <
               static_cast<__int128>(process.footprint_pages) * kPageBytes;
  }
  // ScanMask is the kernel's get_scan_cpumasks. The result is the online
  // set or a scratch member, valid until the next call.
  const CpuSet& ScanMask(const MmState& mm, const ThreadRef& thread);

  // ThreadPreferredLlc is the per-thread preference account_mm_sched sets
  // (p->preferred_llc), evaluated against the current mm.pref_cpu.
  int ThreadPreferredLlc(const MmState& mm, const ThreadRef& thread) const;

  // Evidence is mm's last_occupancy in full (every LLC the last executed
  // scan examined, in its order, zeros included).
  std::vector<LlcOccupancy> Evidence(const MmState& mm) const;

  // PreferredLlc is the LLC of mm.pref_cpu, or -1.
  int PreferredLlc(const MmState& mm) const {
    return mm.pref_cpu < 0 ? -1 : context_.llc_of(mm.pref_cpu);
  }

  const ModelContext& context() const { return context_; }

 private:
  // EntryHint is, for one CPU, the indexes in MmState::cpus where the last
  // two accounts on that CPU that searched found their entries. A CPU
  // mostly alternates between few processes (threads stay on their CPU),
  // so the hints save the search; EntryFor checks them before use.
  struct EntryHint {
    uint32_t recent = 0;
    uint32_t older = 0;
  };

  // OccupancyOf is Occupancy with the entry of `cpu` already found
  // (nullptr: the process never ran there). A visited CPU that times out
  // only loses its `visited` flag: the caller drops it from
  // mm.visited_entries (DropUnvisited), so a scan's loop can read that
  // list.
  uint64_t OccupancyOf(CpuEntry* entry, int cpu, int64_t now);
  // SpanOccupancy is OccupancyOf's full-scan half.
  uint64_t SpanOccupancy(CpuEntry* entry, int cpu, int64_t now);
  // VisitedOccupancy is OccupancyOf's visited-scan half, for an entry of
  // CPU `rq` (already advanced) and the timeout in epochs: the entry's
  // decay and visit lag catch up in one step, then the timeout, then the
  // share.
  static uint64_t VisitedOccupancy(const RqState& rq, CpuEntry& entry,
                                   int64_t timeout_epochs);
  // EntryFor finds or lazily creates the entry of `cpu` (a new entry
  // moves the visited indexes after it up by one). A hint is only ever a
  // guess: an index whose entry is `cpu` is the entry (they are unique and
  // sorted), whichever process set the hint.
  CpuEntry& EntryFor(MmState& mm, int cpu) {
    EntryHint& hint = entry_hint_[cpu];
    if (hint.recent < mm.cpus.size() && mm.cpus[hint.recent].cpu == cpu) {
      return mm.cpus[hint.recent];
    }
    if (hint.older < mm.cpus.size() && mm.cpus[hint.older].cpu == cpu) {
      std::swap(hint.recent, hint.older);
      return mm.cpus[hint.recent];
    }
    return SearchEntry(mm, cpu, hint);
  }
  // SearchEntry is EntryFor when neither hint holds. Before it creates an
  // entry, it drops the spent ones (DropSpentEntries).
  CpuEntry& SearchEntry(MmState& mm, int cpu, EntryHint& hint);
  // DropSpentEntries removes the entries whose runtime has decayed to zero
  // at their CPU's epoch, but for visited-scan's visited ones, and says
  // whether it removed any. Such an entry is what the kernel's per-CPU
  // state holds for a CPU the process never ran on ({cpu_epoch, 0}, which
  // a lazily created entry reproduces), and visited-scan reads an entry
  // out of its visited set only when an account makes it visited again:
  // dropping it changes no occupancy, evidence or decision.
  bool DropSpentEntries(MmState& mm);
  // InvalidNrReason is kSingleThread / kTooManyThreads, or kNone (kernel
  // invalid_llc_nr, with the per-CPU threshold of the constructor).
  NoPreferenceReason InvalidNrReason(const MmState& mm,
                                     const ProcessRef& process, int cpu) const {
    if (process.nr_threads <= 1) return NoPreferenceReason::kSingleThread;
    if (context_.tunables().aggr_tolerance >= 100) {
      return NoPreferenceReason::kNone;
    }
    return mm.nr_running_avg < too_many_running_[cpu]
               ? NoPreferenceReason::kNone
               : NoPreferenceReason::kTooManyThreads;
  }
  // ScanTally is what the loop of task_cache_work accumulates, LlcTally
  // its part for the LLC being visited (both defined in kernel_model.cc).
  struct ScanTally;
  struct LlcTally;
  // The loop meets the LLCs that have a CPU in the scan mask in order of
  // their lowest such CPU, and in each the CPUs of its span (full-scan)
  // or its visited CPUs, in or out of the mask (visited-scan), in
  // increasing order.
  // ScanAllCpus runs it over every CPU of each LLC, from per-LLC CPU
  // lists, so its cost is linear in the CPUs of the mask.
  void ScanAllCpus(MmState& mm, const ProcessRef& process,
                   const ThreadRef& thread, int64_t now, ScanTally& tally);
  // VisitLlcSpan is ScanAllCpus's body for one LLC: every online CPU of
  // `llc`, then the LLC's close. `group` is the scanning group's slot: a
  // CPU whose rq.curr_group it is counts toward nr_running (as in
  // VisitEntries).
  void VisitLlcSpan(MmState& mm, uint32_t group, int llc, int64_t now,
                    ScanTally& tally);
  // ScanVisitedCpus runs it from the sparse visited set alone: whatever
  // the machine's size, it costs what the visited set does.
  void ScanVisitedCpus(MmState& mm, const ProcessRef& process,
                       const ThreadRef& thread, int64_t now, ScanTally& tally);
  // SortVisitedByLlc puts the visited entries to scan in the loop's order
  // in visit_order_ (for a NUMA-restricted mask, or when an LLC's visited
  // CPUs have another LLC's between them).
  void SortVisitedByLlc(const MmState& mm, const CpuSet& mask);
  // VisitEntries runs visited-scan's loop body over the entries `keys`
  // name in order (indexes into mm.cpus in the low 32 bits), LLC by LLC:
  // each LLC's CPUs consecutive and increasing. With
  // `give_up_if_an_llc_returns` it returns false at a CPU of an LLC it has
  // closed, leaving a tally to throw away: every step is idempotent at
  // `now` (decay to the same time; a time-out clears the same flag), so the
  // scan may start over in the loop's order.
  template <typename Keys>
  bool VisitEntries(MmState& mm, uint32_t group, const Keys& keys,
                    bool give_up_if_an_llc_returns, int64_t now,
                    ScanTally& tally);
  // EndLlc closes the LLC that `llc` tallies: its evidence, and the best LLC
  // so far.
  static void EndLlc(const LlcTally& llc, ScanTally& tally);
  // KeepSparseEvidence stores in mm the occupied LLCs of occupancy_, the
  // evidence of a scan that examined every online LLC in machine order.
  void KeepSparseEvidence(MmState& mm);
  // ScanMaskIsWholeMachine is true when ScanMask is every online CPU.
  bool ScanMaskIsWholeMachine(const ThreadRef& thread) const {
    return !context_.tunables().numa_balancing || thread.numa_node < 0;
  }
  // LlcCpus is the online CPUs of `llc`, in increasing order.
  std::span<const int32_t> LlcCpus(int llc) const {
    return std::span<const int32_t>(llc_cpus_).subspan(
        llc_cpus_begin_[llc], llc_cpus_begin_[llc + 1] - llc_cpus_begin_[llc]);
  }
  // MarkVisited adds `entry` (one of mm.cpus) to the visited set;
  // DropUnvisited removes the entries that lost the flag (visited-scan
  // only).
  void MarkVisited(MmState& mm, CpuEntry& entry);
  void DropUnvisited(MmState& mm);

  // LlcMark is what one pass over CPUs noted of one LLC; a field holds for
  // the pass whose number it equals (stale marks need no clearing).
  struct LlcMark {
    uint64_t seen = 0;     // a CPU of it was met
    uint64_t in_scan = 0;  // it has a visited CPU in the mask
    uint32_t rank = 0;     // its place in the scan (SortVisitedByLlc)
  };

  ModelContext& context_;
  const ScanScope scope_;
  CpuSet mask_;  // scratch: a NUMA-restricted scan mask
  // llc_cpus_ lists every LLC's online CPUs, LLC after LLC; LLC l's are
  // from llc_cpus_begin_[l] to llc_cpus_begin_[l + 1].
  std::vector<int32_t> llc_cpus_;
  std::vector<uint32_t> llc_cpus_begin_;
  // visit_order_ holds SortVisitedByLlc's result, each entry as
  // (LLC rank << 32 | index in mm.cpus), so sorting orders LLCs then CPUs.
  std::vector<uint64_t> visit_order_;
  std::vector<LlcMark> llc_mark_;  // by LLC id
  // occupancy_ is the full evidence of the policy's last scan of every
  // online LLC (ScanOutcome::llc_occupancy views it); any other scan
  // writes its evidence straight into MmState::last_occupancy.
  std::vector<LlcOccupancy> occupancy_;
  // online_llc_order_ is every LLC with an sd_llc (two online CPUs or
  // more), by its lowest CPU: the order a scan over every online CPU
  // examines them in.
  std::vector<int32_t> online_llc_order_;
  uint64_t passes_ = 0;            // passes over CPUs, for LlcMark
  std::vector<EntryHint> entry_hint_;  // by CPU
  // too_many_running_ is, by CPU, the smallest nr_running_avg that
  // invalid_llc_nr rejects on that CPU's LLC (see the constructor).
  std::vector<int64_t> too_many_running_;
  // capacity_bounded_ says whether exceed_llc_capacity can hold at all
  // (numa_balancing on and aggr_tolerance below 100); capacity_bytes_ is,
  // by CPU, the largest footprint its LLC takes (llc bytes times the
  // tolerance scale), in 128 bits as the kernel's comparison is exact.
  bool capacity_bounded_ = false;
  std::vector<__int128> capacity_bytes_;
};

inline void KernelModel::Account(MmState& mm, const ProcessRef& process,
                                 int cpu, int64_t delta_ns) {
  // Kernel account_mm_sched.
  if (!context_.enabled() || delta_ns <= 0) return;
  const RqState& rq = context_.rq(cpu);
  CpuEntry& entry = EntryFor(mm, cpu);
  CatchUpEntry(rq, entry);
  entry.runtime = AddRuntime(entry.runtime, static_cast<uint64_t>(delta_ns));
  if (scope_ == ScanScope::kVisitedCpus) {
    entry.visit_lag = 0;  // CatchUpEntry brought `epoch` to the CPU's
    if (!entry.visited) MarkVisited(mm, entry);
  }
  NoPreferenceReason reset = NoPreferenceReason::kNone;
  if (rq.cpu_epoch - process.epoch >
      context_.tunables().affinity_timeout_epochs) {
    reset = NoPreferenceReason::kTimedOut;
  } else if (NoPreferenceReason nr = InvalidNrReason(mm, process, cpu);
             nr != NoPreferenceReason::kNone) {
    reset = nr;
  } else if (ExceedsCapacity(process, cpu)) {
    reset = NoPreferenceReason::kFootprintTooLarge;
  }
  if (reset != NoPreferenceReason::kNone) {
    mm.pref_cpu = -1;
    mm.reason = reset;
  }
}

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_KERNEL_MODEL_H_
