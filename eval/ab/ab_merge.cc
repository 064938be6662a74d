#include "eval/ab/ab_merge.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "policies/stats.h"

namespace schedcache::ab {
namespace {

// CheckSameShape refuses to add up runs that are not the same experiment.
absl::Status CheckSameShape(const AbResult& first, const AbResult& part) {
  const std::string& name = part.input.description;
  auto differ = [&name](absl::string_view field, const std::string& want,
                        const std::string& got) {
    return absl::InvalidArgumentError(
        absl::StrCat("input ", name, ": ", field, " is \"", got,
                     "\", the first input's is \"", want, "\""));
  };
  auto policy_names = [](const AbResult& r) {
    std::vector<std::string> names;
    for (const PolicyResult& p : r.policies) names.push_back(p.report.name);
    return absl::StrJoin(names, ",");
  };
  if (policy_names(first) != policy_names(part)) {
    return differ("policies", policy_names(first), policy_names(part));
  }
  if (first.input.topology_source != part.input.topology_source) {
    return differ("topologySource", first.input.topology_source,
                  part.input.topology_source);
  }
  if (first.input.topology != part.input.topology) {
    return differ("topology", first.input.topology, part.input.topology);
  }
  if (first.input.hz != part.input.hz) {
    return differ("hz", absl::StrCat(first.input.hz),
                  absl::StrCat(part.input.hz));
  }
  return absl::OkStatus();
}

AbInput MergeInputs(const std::vector<AbResult>& parts) {
  AbInput merged = parts[0].input;
  std::vector<std::string> descriptions;
  merged.samples = merged.handovers = merged.malformed_lines = 0;
  merged.kernel_decisions = merged.kernel_decisions_unmatched = 0;
  merged.malformed_examples.clear();
  merged.duration_ns = 0;
  for (const AbResult& part : parts) {
    const AbInput& in = part.input;
    descriptions.push_back(in.description);
    merged.samples += in.samples;
    merged.handovers += in.handovers;
    merged.malformed_lines += in.malformed_lines;
    merged.kernel_decisions += in.kernel_decisions;
    merged.kernel_decisions_unmatched += in.kernel_decisions_unmatched;
    for (const std::string& example : in.malformed_examples) {
      if (merged.malformed_examples.size() == kMaxMergedExamples) break;
      merged.malformed_examples.push_back(
          absl::StrCat(in.description, ": ", example));
    }
    merged.start_ns = std::min(merged.start_ns, in.start_ns);
    merged.duration_ns = SaturatingAddNs(merged.duration_ns, in.duration_ns);
  }
  merged.description = absl::StrCat(
      parts.size(), " inputs: ", absl::StrJoin(descriptions, "; "));
  return merged;
}

// MergeBounded merges summaries whose observations are gone: count, mean
// and max stay exact, p50/p99 become upper bounds (see the header).
Distribution MergeBounded(const std::vector<const Distribution*>& parts) {
  Distribution merged;
  double sum = 0;
  for (const Distribution* d : parts) {
    merged.count += d->count;
    sum += d->mean * static_cast<double>(d->count);
    merged.p50 = std::max(merged.p50, d->p50);
    merged.p99 = std::max(merged.p99, d->p99);
    merged.max = std::max(merged.max, d->max);
  }
  if (merged.count > 0) merged.mean = sum / static_cast<double>(merged.count);
  return merged;
}

// MergeHistograms adds the bins of every part, ascending by CPUs scanned.
std::vector<HistogramBin> MergeHistograms(
    const std::vector<const PolicyResult*>& parts) {
  std::vector<HistogramBin> bins;
  for (const PolicyResult* p : parts) {
    bins.insert(bins.end(), p->cpus_scanned_histogram.begin(),
                p->cpus_scanned_histogram.end());
  }
  std::sort(bins.begin(), bins.end(),
            [](const HistogramBin& a, const HistogramBin& b) {
              return a.cpus_scanned < b.cpus_scanned;
            });
  std::vector<HistogramBin> merged;
  for (const HistogramBin& bin : bins) {
    if (!merged.empty() && merged.back().cpus_scanned == bin.cpus_scanned) {
      merged.back().scans += bin.scans;
    } else {
      merged.push_back(bin);
    }
  }
  return merged;
}

// CpusScanned is exact when every part with scans has its histogram.
Distribution CpusScanned(const std::vector<const PolicyResult*>& parts,
                         const std::vector<HistogramBin>& histogram) {
  std::vector<const Distribution*> summaries;
  bool complete = true;
  for (const PolicyResult* p : parts) {
    summaries.push_back(&p->report.cpus_scanned);
    if (p->report.cpus_scanned.count > 0 && p->cpus_scanned_histogram.empty()) {
      complete = false;
    }
  }
  if (!complete || histogram.empty()) return MergeBounded(summaries);
  ExactHistogram exact(static_cast<int>(histogram.back().cpus_scanned));
  for (const HistogramBin& bin : histogram)
    exact.Add(bin.cpus_scanned, bin.scans);
  return exact.Summarize();
}

// MergePolicy merges policy `index` of every part; `weights` are the parts'
// runtimes, which weigh their runtime-on-preferred-LLC shares.
PolicyResult MergePolicy(const std::vector<AbResult>& parts, size_t index,
                         const std::vector<double>& weights) {
  std::vector<const PolicyResult*> policy;
  for (const AbResult& part : parts) policy.push_back(&part.policies[index]);
  PolicyResult merged;
  PolicyReport& r = merged.report;
  r.name = policy[0]->report.name;
  std::vector<const Distribution*> llcs, scan_ns;
  double weighted_share = 0, weight = 0;
  for (size_t i = 0; i < policy.size(); ++i) {
    const PolicyReport& p = policy[i]->report;
    r.scans += p.scans;
    r.scans_skipped += p.scans_skipped;
    r.scans_skipped_disabled += p.scans_skipped_disabled;
    r.scans_aborted += p.scans_aborted;
    r.decisions += p.decisions;
    r.agreements += p.agreements;
    r.preferred_llc_changes += p.preferred_llc_changes;
    r.kernel_decisions += p.kernel_decisions;
    r.kernel_scans += p.kernel_scans;
    r.kernel_agreements += p.kernel_agreements;
    r.kernel_process_scans += p.kernel_process_scans;
    llcs.push_back(&p.llcs_scanned);
    scan_ns.push_back(&p.scan_ns);
    weighted_share += p.runtime_on_preferred_llc * weights[i];
    weight += weights[i];
  }
  merged.cpus_scanned_histogram = MergeHistograms(policy);
  r.cpus_scanned = CpusScanned(policy, merged.cpus_scanned_histogram);
  r.llcs_scanned = MergeBounded(llcs);
  r.scan_ns = MergeBounded(scan_ns);
  if (r.decisions > 0) {
    r.agreement =
        static_cast<double>(r.agreements) / static_cast<double>(r.decisions);
  }
  if (r.kernel_scans > 0) {
    r.kernel_agreement = static_cast<double>(r.kernel_agreements) /
                         static_cast<double>(r.kernel_scans);
  }
  if (weight > 0) r.runtime_on_preferred_llc = weighted_share / weight;
  return merged;
}

// BusiestFirst moves every part's `list` (its processes or its cache
// groups) into one list in descending runtime_ns; ties keep the parts'
// order. The ids in it are each input's own, so nothing is added up.
template <typename Item>
std::vector<Item> BusiestFirst(std::vector<AbResult>& parts,
                               std::vector<Item> AbResult::*list) {
  std::vector<Item> merged;
  for (AbResult& part : parts) {
    std::move((part.*list).begin(), (part.*list).end(),
              std::back_inserter(merged));
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Item& a, const Item& b) {
                     return a.runtime_ns > b.runtime_ns;
                   });
  return merged;
}

std::vector<ProcessResult> MergeProcesses(std::vector<AbResult>& parts) {
  std::vector<ProcessResult> merged =
      BusiestFirst(parts, &AbResult::processes);
  for (size_t rank = kMaxTimelines; rank < merged.size(); ++rank) {
    merged[rank].preferred_llc_over_time.clear();
  }
  return merged;
}

}  // namespace

absl::StatusOr<AbResult> MergeAbResults(std::vector<AbResult> parts) {
  if (parts.empty()) {
    return absl::InvalidArgumentError("merge: no results to merge");
  }
  for (const AbResult& part : parts) {
    RETURN_IF_ERROR(CheckSameShape(parts[0], part));
  }
  std::vector<double> runtimes;
  for (const AbResult& part : parts) {
    double runtime = 0;
    for (const ProcessResult& p : part.processes) {
      runtime += static_cast<double>(p.runtime_ns);
    }
    runtimes.push_back(runtime);
  }
  AbResult merged;
  merged.input = MergeInputs(parts);
  for (size_t i = 0; i < parts[0].policies.size(); ++i) {
    merged.policies.push_back(MergePolicy(parts, i, runtimes));
  }
  merged.processes = MergeProcesses(parts);
  merged.cache_groups = BusiestFirst(parts, &AbResult::cache_groups);
  return merged;
}

}  // namespace schedcache::ab
