#include "policies/kernel_model.h"

#include <algorithm>

#include "policies/scan_stopwatch.h"

namespace schedcache {

KernelModel::KernelModel(ModelContext& context, ScanScope scope)
    : context_(context),
      scope_(scope),
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
  auto it = std::lower_bound(
      mm.cpus.begin(), mm.cpus.end(), cpu,
      [](const CpuEntry& e, int c) { return e.cpu < c; });
  hint.older = hint.recent;
  hint.recent = static_cast<uint32_t>(it - mm.cpus.begin());
  if (it != mm.cpus.end() && it->cpu == cpu) return *it;
  const int64_t epoch = context_.rq(cpu).cpu_epoch;
  return *mm.cpus.insert(it, CpuEntry{cpu, epoch, 0, epoch});
}

bool KernelModel::InvalidNr(const MmState& mm, const ProcessRef& process,
                            int cpu) const {
  return InvalidNrReason(mm, process, cpu) != NoPreferenceReason::kNone;
}

const CpuSet& KernelModel::ScanMask(const MmState& mm, const ThreadRef& thread) {
  // Kernel get_scan_cpumasks.
  if (!context_.tunables().numa_balancing || thread.numa_node < 0) {
    mask_ = context_.online();
    return mask_;
  }
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
  return OccupancyOf(mm, it != mm.cpus.end() && it->cpu == cpu ? &*it : nullptr,
                     cpu, now);
}

uint64_t KernelModel::OccupancyOf(MmState& mm, CpuEntry* entry, int cpu,
                                  int64_t now) {
  // Kernel fraction_mm_sched (v6 for visited-scan: decay, then time out).
  context_.Advance(cpu, now);
  // A CPU that never ran the process holds the lazily-created entry
  // {cpu_epoch, 0}: its occupancy is 0 and creating it changes nothing.
  if (entry == nullptr) return 0;
  const RqState& rq = context_.rq(cpu);
  CatchUpEntry(rq, *entry);
  if (scope_ == ScanScope::kVisitedCpus &&
      rq.cpu_epoch - entry->last_visit_epoch >
          context_.tunables().affinity_timeout_epochs) {
    mm.visited_cpus.Clear(cpu);
    return 0;
  }
  return OccupancyRatio(entry->runtime, rq.cpu_runtime);
}

ScanOutcome KernelModel::Scan(MmState& mm, const ProcessRef& process,
                              const ThreadRef& thread, int64_t now) {
  // Kernel task_cache_work.
  if (!context_.enabled()) return {ScanOutcome::Kind::kSkippedDisabled, {}};
  if (now < mm.next_scan) return {ScanOutcome::Kind::kSkipped, {}};
  mm.next_scan = now + context_.tunables().epoch_period_ns;
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
  ScanMask(mm, thread);
  if (scope_ == ScanScope::kVisitedCpus) mask_ &= mm.visited_cpus;
  ScanOutcome outcome = ScanLlcs(mm, process, thread, mask_, now);
  outcome.cost.scan_ns = stopwatch.ElapsedNs();
  mm.last_cost = outcome.cost;
  outcome.llc_occupancy = mm.last_occupancy;
  return outcome;
}

ScanOutcome KernelModel::ScanLlcs(MmState& mm, const ProcessRef& process,
                                  const ThreadRef& thread, CpuSet& mask,
                                  int64_t now) {
  ScanOutcome outcome{ScanOutcome::Kind::kExecuted, {}};
  const int current_llc = PreferredLlc(mm);
  uint64_t best_occ = 0;
  uint64_t current_llc_occ = 0;
  int best_cpu = -1;
  int nr_running = 0;
  mm.last_occupancy.clear();
  // LLCs in order of the lowest CPU of the mask in each; a later LLC needs
  // strictly more occupancy to win.
  while (!mask.Empty()) {
    const int llc = context_.llc_of(mask.First());
    const CpuSet& span = context_.llc_span(llc);
    uint64_t llc_occ = 0;
    uint64_t top_occ = 0;
    int top_cpu = -1;
    // The entries are sorted by CPU and a span is visited in increasing CPU
    // order, so one cursor walks both: one search per LLC, not per CPU.
    auto entry = std::lower_bound(
        mm.cpus.begin(), mm.cpus.end(), span.First(),
        [](const CpuEntry& e, int c) { return e.cpu < c; });
    auto visit = [&](int i) {
      ++outcome.cost.cpus_scanned;
      const RqState& rq = context_.rq(i);
      if (rq.curr_tgid == process.tgid) ++nr_running;
      while (entry != mm.cpus.end() && entry->cpu < i) ++entry;
      const uint64_t occ = OccupancyOf(
          mm, entry != mm.cpus.end() && entry->cpu == i ? &*entry : nullptr,
          i, now);
      llc_occ += occ;
      if (occ > top_occ) {
        top_occ = occ;
        top_cpu = i;
      }
    };
    if (scope_ == ScanScope::kVisitedCpus) {
      // A copy, not ForEachAnd: OccupancyOf may clear (and so shrink)
      // visited_cpus while the loop runs.
      span_.AssignIntersection(span, mm.visited_cpus);
      span_.ForEach(visit);
    } else {
      span.ForEach(visit);
    }
    ++outcome.cost.llcs_scanned;
    mm.last_occupancy.push_back(LlcOccupancy{llc, llc_occ});
    if (llc_occ > best_occ) {
      best_occ = llc_occ;
      best_cpu = top_cpu;
    }
    if (llc == current_llc) current_llc_occ = llc_occ;
    mask -= span;
  }
  // The 2x rule: keep the preferred LLC unless another has more than twice
  // its occupancy.
  if (best_occ > 2 * current_llc_occ) mm.pref_cpu = best_cpu;
  mm.reason = mm.pref_cpu >= 0 ? NoPreferenceReason::kNone
                               : NoPreferenceReason::kNoData;
  // Kernel update_avg_scale, with sd_llc_size of the scanning thread's CPU.
  const int64_t divisor =
      std::clamp(context_.llc_size(context_.llc_of(thread.cpu)) >> 2, 2, 8);
  mm.nr_running_avg += (nr_running - mm.nr_running_avg) / divisor;
  mm.last_nr_running = nr_running;
  return outcome;
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
