#include "policies/kernel_model.h"

#include <algorithm>
#include <iterator>

#include "policies/scan_stopwatch.h"

namespace schedcache {
namespace {

// DivideByAvgScale is x / divisor, truncating toward zero, for the divisors
// update_avg_scale uses (2 to 8): each case divides by a constant, which
// the compiler turns into a multiply and shifts, where one 64-bit idiv of
// a run-time divisor takes tens of cycles on the critical path of a scan.
int64_t DivideByAvgScale(int64_t x, int divisor) {
  switch (divisor) {
    case 2: return x / 2;
    case 3: return x / 3;
    case 4: return x / 4;
    case 5: return x / 5;
    case 6: return x / 6;
    case 7: return x / 7;
    default: return x / 8;
  }
}

}  // namespace

KernelModel::KernelModel(ModelContext& context, ScanScope scope)
    : context_(context),
      scope_(scope),
      llc_mark_(context.topology().llcs().size()),
      entry_hint_(context.num_cpu_slots()),
      too_many_running_(context.num_cpu_slots(), 0),
      capacity_bytes_(context.num_cpu_slots(), 0) {
  // invalid_llc_nr compares avg * smt * 1280 < tolerance * llc_size * 1024
  // on every account. With k = smt * 1280 > 0 and r = tolerance * llc_size
  // * 1024 >= 0, for an integer avg: avg * k < r  <=>  avg < ceil(r / k),
  // so the comparison against the precomputed ceil(r / k) is exact.
  const int64_t tolerance = context.tunables().aggr_tolerance;
  for (int cpu = 0; cpu < context.num_cpu_slots(); ++cpu) {
    const int llc = context.llc_of(cpu);
    if (llc < 0) continue;  // a hole in the os indexes
    const int64_t k = int64_t{context.smt_threads()} * 1280;
    const int64_t r = tolerance * context.llc_size(llc) * 1024;
    too_many_running_[cpu] = (r + k - 1) / k;
  }
  // The scan loops walk these lists, not the spans: a span's words run
  // from CPU 0, so iterating the spans of a 4096-CPU machine's LLCs one
  // after the other would read 64 words per LLC.
  for (int llc = 0; llc < static_cast<int>(llc_mark_.size()); ++llc) {
    llc_cpus_begin_.push_back(static_cast<uint32_t>(llc_cpus_.size()));
    context.llc_span(llc).ForEach([&](int cpu) { llc_cpus_.push_back(cpu); });
  }
  llc_cpus_begin_.push_back(static_cast<uint32_t>(llc_cpus_.size()));
  context.online().ForEach([&](int cpu) {
    const int llc = context.llc_of(cpu);
    if (llc_cpus_[llc_cpus_begin_[llc]] == cpu &&
        context.has_llc_domain(llc)) {
      online_llc_order_.push_back(llc);
    }
  });
  // exceed_llc_capacity's scale and product, once per CPU.
  const ModelTunables& tunables = context.tunables();
  capacity_bounded_ = tunables.numa_balancing && tolerance < 100;
  const __int128 scale = tolerance == 0 ? 0 : 1 + (tolerance - 1) * 256;
  for (int cpu = 0; cpu < context.num_cpu_slots(); ++cpu) {
    const int llc = context.llc_of(cpu);
    if (llc >= 0) capacity_bytes_[cpu] = context.llc_bytes(llc) * scale;
  }
}

CpuEntry& KernelModel::SearchEntry(MmState& mm, int cpu, EntryHint& hint) {
  const auto lower_bound = [&] {
    return std::lower_bound(
        mm.cpus.begin(), mm.cpus.end(), cpu,
        [](const CpuEntry& e, int c) { return e.cpu < c; });
  };
  auto it = lower_bound();
  const bool found = it != mm.cpus.end() && it->cpu == cpu;
  // A process that moves to a new CPU first forgets the CPUs it no longer
  // occupies, so its state follows where it runs, not everywhere it ran.
  if (!found && DropSpentEntries(mm)) it = lower_bound();
  const uint32_t index = static_cast<uint32_t>(it - mm.cpus.begin());
  hint.older = hint.recent;
  hint.recent = index;
  if (found) return *it;
  // The visited set names entries by index: those at or after the new one
  // move up by one.
  for (uint32_t& visited : mm.visited_entries) visited += visited >= index;
  const int64_t epoch = context_.rq(cpu).cpu_epoch;
  return *mm.cpus.insert(it, CpuEntry{.cpu = cpu, .epoch = epoch});
}

bool KernelModel::DropSpentEntries(MmState& mm) {
  size_t kept = 0;
  for (CpuEntry& entry : mm.cpus) {
    // Decay to the CPU's epoch now or at the entry's next use gives the
    // same runtime: halvings compose.
    if (!entry.visited) CatchUpEntry(context_.rq(entry.cpu), entry);
    if (entry.visited || entry.runtime != 0) mm.cpus[kept++] = entry;
  }
  if (kept == mm.cpus.size()) return false;
  mm.cpus.resize(kept);
  mm.visited_entries.clear();
  for (uint32_t index = 0; index < kept; ++index) {
    if (mm.cpus[index].visited) mm.visited_entries.push_back(index);
  }
  return true;
}

bool KernelModel::InvalidNr(const MmState& mm, const ProcessRef& process,
                            int cpu) const {
  return InvalidNrReason(mm, process, cpu) != NoPreferenceReason::kNone;
}

const CpuSet& KernelModel::ScanMask(const MmState& mm, const ThreadRef& thread) {
  // Kernel get_scan_cpumasks.
  if (ScanMaskIsWholeMachine(thread)) return context_.online();
  mask_ = context_.node_span(thread.numa_node);
  if (mm.pref_cpu >= 0 && !mask_.Test(mm.pref_cpu)) {
    mask_ |= context_.node_span(context_.node_of(mm.pref_cpu));
  }
  if (thread.cpu >= 0 && !mask_.Test(thread.cpu)) {
    mask_ |= context_.node_span(context_.node_of(thread.cpu));
  }
  return mask_;
}

uint64_t KernelModel::Occupancy(MmState& mm, int cpu, int64_t now) {
  auto it = std::lower_bound(
      mm.cpus.begin(), mm.cpus.end(), cpu,
      [](const CpuEntry& e, int c) { return e.cpu < c; });
  CpuEntry* entry = it != mm.cpus.end() && it->cpu == cpu ? &*it : nullptr;
  const bool was_visited = entry != nullptr && entry->visited;
  const uint64_t occupancy = OccupancyOf(entry, cpu, now);
  if (was_visited && !entry->visited) DropUnvisited(mm);
  return occupancy;
}

inline uint64_t KernelModel::OccupancyOf(CpuEntry* entry, int cpu,
                                         int64_t now) {
  // Kernel fraction_mm_sched (v6 for visited-scan: decay, then time out).
  if (scope_ == ScanScope::kAllCpus) return SpanOccupancy(entry, cpu, now);
  context_.Advance(cpu, now);
  // A CPU that never ran the process holds the lazily-created entry
  // {cpu_epoch, 0}: its occupancy is 0 and creating it changes nothing.
  if (entry == nullptr) return 0;
  return VisitedOccupancy(context_.rq(cpu), *entry,
                          context_.tunables().affinity_timeout_epochs);
}

inline uint64_t KernelModel::SpanOccupancy(CpuEntry* entry, int cpu,
                                           int64_t now) {
  context_.Advance(cpu, now);
  if (entry == nullptr) return 0;  // see OccupancyOf
  const RqState& rq = context_.rq(cpu);
  CatchUpEntry(rq, *entry);
  return OccupancyRatio(entry->runtime, rq.cpu_runtime);
}

inline uint64_t KernelModel::VisitedOccupancy(const RqState& rq,
                                              CpuEntry& entry,
                                              int64_t timeout_epochs) {
  if (const int64_t behind = rq.cpu_epoch - entry.epoch; behind > 0) {
    // After the catch-up the lag is the CPU's epoch minus the last visit,
    // what the kernel compares with the timeout.
    entry.visit_lag = static_cast<uint32_t>(std::min<int64_t>(
        entry.visit_lag + behind, CpuEntry::kMaxVisitLag));
    CatchUpEntry(rq, entry);
  }
  if (entry.visit_lag > timeout_epochs) {
    entry.visited = false;
    return 0;
  }
  return OccupancyRatio(entry.runtime, rq.cpu_runtime);
}

void KernelModel::MarkVisited(MmState& mm, CpuEntry& entry) {
  entry.visited = true;
  const uint32_t index = static_cast<uint32_t>(&entry - mm.cpus.data());
  mm.visited_entries.insert(
      std::lower_bound(mm.visited_entries.begin(), mm.visited_entries.end(),
                       index),
      index);
}

void KernelModel::DropUnvisited(MmState& mm) {
  std::erase_if(mm.visited_entries,
                [&](uint32_t index) { return !mm.cpus[index].visited; });
}

// ScanTally is one scan's running state but for the LLC being visited:
// the best LLC so far and the evidence.
struct KernelModel::ScanTally {
  int current_llc = -1;  // the LLC of mm.pref_cpu, -1 for none
  uint64_t best_occ = 0;
  uint64_t current_llc_occ = 0;
  int best_cpu = -1;
  int nr_running = 0;
  ScanCost cost;
  // A visited CPU timed out (visited-scan): the set drops it after the
  // loop. A scan that starts over meets the same entries again, with
  // their flags already cleared, so it sets this again.
  bool evicted = false;
  // evidence receives each LLC's occupancy as the LLC closes.
  std::vector<LlcOccupancy>* evidence = nullptr;
};

// LlcTally is the loop's state in the LLC being visited. The loops keep it
// in a local, apart from the ScanTally they reach by reference, so that the
// stores into CPU entries cannot make the compiler reload it.
struct KernelModel::LlcTally {
  int llc = -1;
  uint64_t occupancy = 0;
  uint64_t top_occ = 0;
  int top_cpu = -1;

  void Add(int cpu, uint64_t occ) {
    occupancy += occ;
    if (occ > top_occ) {
      top_occ = occ;
      top_cpu = cpu;
    }
  }
};

ScanOutcome KernelModel::Scan(MmState& mm, const ProcessRef& process,
                              const ThreadRef& thread, int64_t now) {
  // Kernel task_cache_work.
  if (!context_.enabled()) return {ScanOutcome::Kind::kSkippedDisabled, {}};
  // `now` and next_scan are jiffies: time_before(now, next_scan) skips,
  // and the scan that runs moves next_scan one period on.
  if (now < mm.next_scan) return {ScanOutcome::Kind::kSkipped, {}};
  mm.next_scan = now + context_.epoch_period();
  const int curr = thread.cpu;
  if (NoPreferenceReason nr = InvalidNrReason(mm, process, curr);
      nr != NoPreferenceReason::kNone) {
    mm.pref_cpu = -1;
    mm.reason = nr;
    return {ScanOutcome::Kind::kAborted, {}};
  }
  if (ExceedsCapacity(process, curr)) {
    mm.pref_cpu = -1;
    mm.reason = NoPreferenceReason::kFootprintTooLarge;
    return {ScanOutcome::Kind::kAborted, {}};
  }
  const ScanStopwatch stopwatch;
  ScanTally tally;
  tally.current_llc = PreferredLlc(mm);
  // Only a scan of every online LLC keeps sparse evidence; any other
  // writes its full evidence in place.
  const bool sparse_evidence =
      scope_ == ScanScope::kAllCpus && ScanMaskIsWholeMachine(thread);
  tally.evidence = sparse_evidence ? &occupancy_ : &mm.last_occupancy;
  tally.evidence->clear();
  if (scope_ == ScanScope::kVisitedCpus) {
    ScanVisitedCpus(mm, process, thread, now, tally);
  } else {
    ScanAllCpus(mm, process, thread, now, tally);
  }
  mm.last_occupancy_sparse = sparse_evidence;
  if (sparse_evidence) KeepSparseEvidence(mm);
  // The 2x rule: keep the preferred LLC unless another has more than twice
  // its occupancy.
  if (tally.best_occ > 2 * tally.current_llc_occ) mm.pref_cpu = tally.best_cpu;
  mm.reason = mm.pref_cpu >= 0 ? NoPreferenceReason::kNone
                               : NoPreferenceReason::kNoData;
  // Kernel update_avg_scale, with sd_llc_size of the scanning thread's CPU.
  const int divisor =
      std::clamp(context_.llc_size(context_.llc_of(thread.cpu)) >> 2, 2, 8);
  mm.nr_running_avg +=
      DivideByAvgScale(tally.nr_running - mm.nr_running_avg, divisor);
  mm.last_nr_running = tally.nr_running;
  ScanOutcome outcome{ScanOutcome::Kind::kExecuted, tally.cost};
  outcome.cost.scan_ns = stopwatch.ElapsedNs();
  mm.last_cost = outcome.cost;
  outcome.llc_occupancy = *tally.evidence;
  return outcome;
}

void KernelModel::KeepSparseEvidence(MmState& mm) {
  mm.last_occupancy.clear();
  std::copy_if(occupancy_.begin(), occupancy_.end(),
               std::back_inserter(mm.last_occupancy),
               [](const LlcOccupancy& llc) { return llc.occupancy != 0; });
}

std::vector<LlcOccupancy> KernelModel::Evidence(const MmState& mm) const {
  if (!mm.last_occupancy_sparse) return mm.last_occupancy;
  // Both lists are in machine order: one walk fills in the zeros.
  std::vector<LlcOccupancy> evidence;
  evidence.reserve(online_llc_order_.size());
  auto occupied = mm.last_occupancy.begin();
  for (const int32_t llc : online_llc_order_) {
    uint64_t occupancy = 0;
    if (occupied != mm.last_occupancy.end() && occupied->llc == llc) {
      occupancy = occupied->occupancy;
      ++occupied;
    }
    evidence.push_back(LlcOccupancy{llc, occupancy});
  }
  return evidence;
}

inline void KernelModel::EndLlc(const LlcTally& llc, ScanTally& tally) {
  ++tally.cost.llcs_scanned;
  tally.evidence->push_back(LlcOccupancy{llc.llc, llc.occupancy});
  // A later LLC needs strictly more occupancy to win.
  if (llc.occupancy > tally.best_occ) {
    tally.best_occ = llc.occupancy;
    tally.best_cpu = llc.top_cpu;
  }
  if (llc.llc == tally.current_llc) tally.current_llc_occ = llc.occupancy;
}

template <typename Keys>
bool KernelModel::VisitEntries(MmState& mm, uint32_t group, const Keys& keys,
                               bool give_up_if_an_llc_returns, int64_t now,
                               ScanTally& tally) {
  if (give_up_if_an_llc_returns) ++passes_;
  const int64_t timeout_epochs = context_.tunables().affinity_timeout_epochs;
  LlcTally llc;
  int entry_llc = -1;  // the LLC of the entries met last
  int nr_running = 0;
  int scanned = 0;
  bool evicted = false;
  for (const auto key : keys) {
    CpuEntry& entry = mm.cpus[static_cast<uint32_t>(key)];
    const int cpu = entry.cpu;
    if (const int cpu_llc = context_.llc_of(cpu); cpu_llc != entry_llc) {
      if (give_up_if_an_llc_returns) {
        LlcMark& mark = llc_mark_[cpu_llc];
        if (mark.seen == passes_) return false;
        mark.seen = passes_;
      }
      if (llc.llc >= 0) EndLlc(llc, tally);
      entry_llc = cpu_llc;
      // A CPU with no sd_llc is skipped (LlcTally -1: nothing to close).
      llc = LlcTally{.llc = context_.has_llc_domain(cpu_llc) ? cpu_llc : -1};
    }
    if (llc.llc < 0) continue;
    context_.Advance(cpu, now);
    const RqState& rq = context_.rq(cpu);
    nr_running += rq.curr_group == group;
    llc.Add(cpu, VisitedOccupancy(rq, entry, timeout_epochs));
    evicted |= !entry.visited;
    ++scanned;
  }
  if (llc.llc >= 0) EndLlc(llc, tally);
  tally.cost.cpus_scanned += scanned;
  tally.nr_running += nr_running;
  tally.evicted |= evicted;
  return true;
}

void KernelModel::VisitLlcSpan(MmState& mm, uint32_t group, int llc,
                               int64_t now, ScanTally& tally) {
  const std::span<const int32_t> cpus = LlcCpus(llc);
  // The entries are sorted by CPU too: one search per LLC, then a walk.
  auto entry = std::lower_bound(
      mm.cpus.begin(), mm.cpus.end(), cpus.front(),
      [](const CpuEntry& e, int c) { return e.cpu < c; });
  LlcTally llc_tally{.llc = llc};
  int nr_running = 0;
  for (const int cpu : cpus) {
    while (entry != mm.cpus.end() && entry->cpu < cpu) ++entry;
    // Mostly not the process: a branch costs less than a set and add.
    if (context_.rq(cpu).curr_group == group) ++nr_running;
    llc_tally.Add(cpu, SpanOccupancy(entry != mm.cpus.end() && entry->cpu == cpu
                                         ? &*entry
                                         : nullptr,
                                     cpu, now));
  }
  tally.cost.cpus_scanned += static_cast<int>(cpus.size());
  tally.nr_running += nr_running;
  EndLlc(llc_tally, tally);
}

void KernelModel::ScanAllCpus(MmState& mm, const ProcessRef& process,
                              const ThreadRef& thread, int64_t now,
                              ScanTally& tally) {
  // One look per CPU of the mask finds its LLCs in the loop's order;
  // every CPU of each LLC counts.
  ++passes_;
  ScanMask(mm, thread).ForEach([&](int cpu) {
    const int llc = context_.llc_of(cpu);
    // Kernel: a CPU with no sd_llc is skipped (`if (!sd) continue`).
    if (!context_.has_llc_domain(llc)) return;
    LlcMark& mark = llc_mark_[llc];
    if (mark.seen == passes_) return;
    mark.seen = passes_;
    VisitLlcSpan(mm, process.slot, llc, now, tally);
  });
}

void KernelModel::SortVisitedByLlc(const MmState& mm, const CpuSet& mask) {
  ++passes_;
  uint32_t next_rank = 0;
  for (const uint32_t index : mm.visited_entries) {
    const int cpu = mm.cpus[index].cpu;
    LlcMark& mark = llc_mark_[context_.llc_of(cpu)];
    if (mark.in_scan != passes_ && mask.Test(cpu)) {
      mark.in_scan = passes_;
      mark.rank = next_rank++;
    }
  }
  visit_order_.clear();
  for (const uint32_t index : mm.visited_entries) {
    const LlcMark& mark = llc_mark_[context_.llc_of(mm.cpus[index].cpu)];
    if (mark.in_scan == passes_) {
      visit_order_.push_back(uint64_t{mark.rank} << 32 | index);
    }
  }
  std::sort(visit_order_.begin(), visit_order_.end());
}

void KernelModel::ScanVisitedCpus(MmState& mm, const ProcessRef& process,
                                  const ThreadRef& thread, int64_t now,
                                  ScanTally& tally) {
  // The visited list is sorted by CPU. That is the loop's order when the
  // mask is every online CPU (and so holds every visited CPU: Account's
  // precondition) unless an LLC's visited CPUs have another LLC's between
  // them (SMT siblings numbered apart, as on the real EPYC); only then,
  // or under a NUMA-restricted mask, is the order sorted by LLC. The loop
  // reads the list unchanged: a CPU that times out only loses its flag,
  // and leaves the list after the loop.
  const ScanTally start = tally;
  if (!ScanMaskIsWholeMachine(thread) ||
      !VisitEntries(mm, process.slot, mm.visited_entries,
                    /*give_up_if_an_llc_returns=*/true, now, tally)) {
    tally = start;
    tally.evidence->clear();
    SortVisitedByLlc(mm, ScanMask(mm, thread));
    VisitEntries(mm, process.slot, visit_order_,
                 /*give_up_if_an_llc_returns=*/false, now, tally);
  }
  if (tally.evicted) DropUnvisited(mm);
}

int KernelModel::ThreadPreferredLlc(const MmState& mm,
                                    const ThreadRef& thread) const {
  if (mm.pref_cpu < 0) return -1;
  if (context_.tunables().numa_balancing && thread.numa_node >= 0 &&
      context_.node_of(mm.pref_cpu) != thread.numa_node) {
    return -1;
  }
  return context_.llc_of(mm.pref_cpu);
}

}  // namespace schedcache
