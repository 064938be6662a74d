#include "eval/ab/ab_collector.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace schedcache::ab {

AbCollector::AbCollector(std::vector<std::string> policies,
                         int max_cpus_scanned, ScanTraceWriter* scan_trace,
                         PerfettoTraceWriter* perfetto, bool wants_last_scans)
    : policies_(std::move(policies)),
      max_cpus_scanned_(max_cpus_scanned),
      scan_trace_(scan_trace),
      perfetto_(perfetto),
      wants_last_scans_(wants_last_scans),
      histograms_(policies_.size(),
                  std::vector<uint64_t>(max_cpus_scanned + 1, 0)) {}

bool AbCollector::HasOccupancy(const Process& p) {
  return std::any_of(
      p.last_occupancy.begin(), p.last_occupancy.end(),
      [](const std::vector<LlcOccupancy>& llcs) { return !llcs.empty(); });
}

bool AbCollector::Busier(const Process& a, const Process& b) {
  return a.runtime_ns != b.runtime_ns ? a.runtime_ns > b.runtime_ns
                                      : a.tgid < b.tgid;
}

size_t AbCollector::IndexOf(int32_t tgid) {
  auto [it, inserted] = index_of_.try_emplace(tgid, processes_.size());
  if (inserted) {
    Process& p = processes_.emplace_back();
    p.tgid = tgid;
    p.llc.assign(policies_.size(), kNoPreferredLlc);
    p.changes.resize(policies_.size());
    p.last_occupancy.resize(policies_.size());
  }
  return it->second;
}

int AbCollector::PolicyIndex(std::string_view name) const {
  for (size_t i = 0; i < policies_.size(); ++i) {
    if (policies_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

void AbCollector::NoteRuntime(size_t index) {
  Process& p = processes_[index];
  if (p.busiest) return;
  if (busiest_.size() < static_cast<size_t>(kMaxTimelines)) {
    p.busiest = true;
    busiest_.push_back(index);
    return;
  }
  // Only a process outside the list can change it, by passing the least
  // busy one inside.
  auto least = std::min_element(
      busiest_.begin(), busiest_.end(), [this](size_t a, size_t b) {
        return Busier(processes_[b], processes_[a]);
      });
  if (!Busier(p, processes_[*least])) return;
  processes_[*least].busiest = false;
  *least = index;
  p.busiest = true;
}

void AbCollector::OnSample(const Sample& sample) {
  const size_t index = IndexOf(sample.tgid);
  Process& p = processes_[index];
  if (p.first_sample_ns < 0) p.first_sample_ns = sample.timestamp_ns;
  if (sample.delta_ns > 0) {
    p.runtime_ns = SaturatingAddNs(p.runtime_ns, sample.delta_ns);
    if (perfetto_ != nullptr) NoteRuntime(index);
  }
  if (sample.cache_group != kOwnCacheGroup) NoteGroup(p, sample);
  p.cache_group = sample.cache_group;
  // The process is named after its main thread, as ps shows it; until that
  // thread shows up, after the first thread seen.
  if (!sample.comm.empty() && !p.comm_from_leader &&
      (p.comm.empty() || sample.tid == sample.tgid)) {
    p.comm = std::string(sample.comm.view());
    p.comm_from_leader = sample.tid == sample.tgid;
  }
}

void AbCollector::NoteGroup(const Process& p, const Sample& sample) {
  auto [it, inserted] =
      group_index_.try_emplace(sample.cache_group, groups_.size());
  if (inserted) groups_.emplace_back().id = sample.cache_group;
  CacheGroup& group = groups_[it->second];
  if (p.cache_group != sample.cache_group &&
      std::find(group.member_tgids.begin(), group.member_tgids.end(),
                sample.tgid) == group.member_tgids.end()) {
    group.member_tgids.push_back(sample.tgid);
  }
  if (sample.delta_ns > 0) {
    group.runtime_ns = SaturatingAddNs(group.runtime_ns, sample.delta_ns);
  }
}

std::vector<CacheGroupResult> AbCollector::CacheGroups(
    const EngineReport& report) const {
  absl::flat_hash_map<uint64_t, const CacheGroupRuntime*> engine_groups;
  for (const CacheGroupRuntime& group : report.cache_groups) {
    engine_groups[group.id] = &group;
  }
  std::vector<CacheGroupResult> result;
  for (const CacheGroup& group : groups_) {
    CacheGroupResult& out = result.emplace_back();
    out.id = group.id;
    if (group.id - 1 < group_names_.size()) {
      out.name = group_names_[group.id - 1];
    }
    out.member_tgids = group.member_tgids;
    out.runtime_ns = group.runtime_ns;
    if (auto it = engine_groups.find(group.id); it != engine_groups.end()) {
      out.runtime_on_preferred_llc_ns = it->second->runtime_on_preferred_llc_ns;
    }
    // The group's preference is each current member's: exited members
    // report none, so the first member still in it that has one tells it.
    out.final_preferred_llc.assign(policies_.size(), kNoPreferredLlc);
    for (const int32_t tgid : group.member_tgids) {
      const Process& p = processes_[index_of_.at(tgid)];
      if (p.cache_group != group.id) continue;
      for (size_t i = 0; i < p.llc.size(); ++i) {
        if (out.final_preferred_llc[i] == kNoPreferredLlc) {
          out.final_preferred_llc[i] = p.llc[i];
        }
      }
    }
  }
  std::sort(result.begin(), result.end(),
            [](const CacheGroupResult& a, const CacheGroupResult& b) {
              return a.runtime_ns != b.runtime_ns ? a.runtime_ns > b.runtime_ns
                                                  : a.id < b.id;
            });
  return result;
}

void AbCollector::OnScan(const ScanObservation& scan) {
  if (scan.policy < 0 || static_cast<size_t>(scan.policy) >= policies_.size()) {
    return;
  }
  const int bin = std::clamp(scan.cpus_scanned, 0, max_cpus_scanned_);
  ++histograms_[scan.policy][bin];
  ProcessOf(scan.tgid).last_occupancy[scan.policy].assign(
      scan.llc_occupancy.begin(), scan.llc_occupancy.end());
  if ((scan_trace_ != nullptr || perfetto_ != nullptr) && status_.ok()) {
    WriteScanTraces(scan);
  }
}

void AbCollector::WriteScanTraces(const ScanObservation& scan) {
  ScanEvent event;
  event.policy = scan.policy;
  event.comm = std::string(scan.comm);
  event.pid = scan.tid;
  event.cpu = scan.cpu;
  event.timestamp_ns = scan.timestamp_ns;
  event.cpus_scanned = scan.cpus_scanned;
  event.tgid = scan.tgid;
  event.llcs_scanned = scan.llcs_scanned;
  event.scan_ns = scan.scan_ns;
  event.llc_occupancy = scan.llc_occupancy;
  if (scan_trace_ != nullptr) {
    status_ = scan_trace_->Write(event);
    if (!status_.ok()) return;
  }
  if (perfetto_ == nullptr) return;
  const Process& p = ProcessOf(scan.tgid);
  const TracedProcess process{scan.tgid, p.comm};
  status_ = perfetto_->WriteScan(process, event);
  // One picture of occupancy per process, the reference policy's: with
  // full-scan as the reference (the default) it covers every LLC of the
  // scan mask.
  if (status_.ok() && scan.policy == 0 && p.busiest) {
    status_ = perfetto_->WriteOccupancy(process, event);
  }
}

void AbCollector::FinishPerfetto() {
  if (perfetto_ == nullptr) return;
  for (const Process& p : processes_) {
    if (!status_.ok()) return;
    status_ = perfetto_->WriteProcess(TracedProcess{p.tgid, p.comm},
                                      std::max<int64_t>(p.first_sample_ns, 0));
  }
}

void AbCollector::OnPreferenceChange(const PreferenceChange& change) {
  const int policy = PolicyIndex(change.policy);
  if (policy < 0) return;
  Process& p = ProcessOf(change.tgid);
  p.llc[policy] = change.new_llc;
  if (perfetto_ != nullptr && status_.ok()) {
    status_ = perfetto_->WriteLlcChange(TracedProcess{p.tgid, p.comm}, policy,
                                        LlcChange{change.timestamp_ns,
                                                  change.new_llc});
  }
  std::vector<LlcChange>& changes = p.changes[policy];
  if (changes.size() >= kMaxChangesPerTimeline) {
    ++dropped_changes_;
    return;
  }
  changes.push_back(LlcChange{change.timestamp_ns, change.new_llc});
}

AbResult AbCollector::Build(const EngineReport& report, AbInput input,
                            bool with_histograms) const {
  AbResult result;
  result.input = std::move(input);
  for (size_t i = 0; i < report.policies.size(); ++i) {
    PolicyResult& policy = result.policies.emplace_back();
    policy.report = report.policies[i];
    if (!with_histograms || i >= histograms_.size()) continue;
    const std::vector<uint64_t>& counts = histograms_[i];
    for (size_t cpus = 0; cpus < counts.size(); ++cpus) {
      if (counts[cpus] == 0) continue;
      policy.cpus_scanned_histogram.push_back(
          HistogramBin{static_cast<int64_t>(cpus), counts[cpus]});
    }
  }
  std::vector<const Process*> order;
  order.reserve(processes_.size());
  for (const Process& p : processes_) order.push_back(&p);
  std::sort(order.begin(), order.end(), [](const Process* a, const Process* b) {
    return Busier(*a, *b);
  });
  if (!order.empty() && HasOccupancy(*order[0])) {
    result.busiest_last_scan = {order[0]->tgid, order[0]->last_occupancy};
  }
  // The engine's per-process agreement with the kernel, by tgid; a tgid
  // that ended and came back sums its lives, as the collector's record
  // does.
  absl::flat_hash_map<int32_t, std::vector<KernelProcessCounts>> kernel;
  for (const KernelProcessReport& k : report.kernel_processes) {
    std::vector<KernelProcessCounts>& sum = kernel[k.tgid];
    sum.resize(k.policies.size());
    for (size_t i = 0; i < k.policies.size(); ++i) {
      sum[i].kernel_scans += k.policies[i].kernel_scans;
      sum[i].scans += k.policies[i].scans;
      sum[i].agreements += k.policies[i].agreements;
    }
  }
  result.cache_groups = CacheGroups(report);
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const Process& p = *order[rank];
    ProcessResult& out = result.processes.emplace_back();
    out.tgid = p.tgid;
    out.comm = p.comm;
    out.runtime_ns = p.runtime_ns;
    out.final_preferred_llc = p.llc;
    if (auto it = kernel.find(p.tgid); it != kernel.end()) {
      out.kernel = it->second;
    }
    if (rank < static_cast<size_t>(kMaxTimelines)) {
      out.preferred_llc_over_time = p.changes;
    }
  }
  return result;
}

}  // namespace schedcache::ab
