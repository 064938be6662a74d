#include "eval/ab/ab_report.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/proto_convert.h"
#include "api/proto_json.h"
#include "common/status_macros.h"
#include "eval/report/internal/json_writer.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/policy_cost.h"
#include "eval/report/policy_table.h"

namespace schedcache::ab {
namespace {

using report_internal::ValidUtf8;

v1::AbInput InputToProto(const AbInput& in) {
  v1::AbInput out;
  out.set_description(ValidUtf8(in.description));
  out.set_topology(ValidUtf8(in.topology));
  out.set_topology_source(ValidUtf8(in.topology_source));
  out.set_samples(in.samples);
  out.set_handovers(in.handovers);
  out.set_malformed_lines(in.malformed_lines);
  for (const std::string& line : in.malformed_examples) {
    out.add_malformed_examples(ValidUtf8(line));
  }
  out.set_start_ns(in.start_ns);
  out.set_duration_ns(in.duration_ns);
  out.set_hz(in.hz);
  out.set_kernel_decisions(in.kernel_decisions);
  out.set_kernel_decisions_unmatched(in.kernel_decisions_unmatched);
  return out;
}

AbInput InputFromProto(const v1::AbInput& in) {
  AbInput out;
  out.description = in.description();
  out.topology = in.topology();
  out.topology_source = in.topology_source();
  out.samples = in.samples();
  out.handovers = in.handovers();
  out.malformed_lines = in.malformed_lines();
  out.malformed_examples.assign(in.malformed_examples().begin(),
                                in.malformed_examples().end());
  out.start_ns = in.start_ns();
  out.duration_ns = in.duration_ns();
  out.hz = in.hz();
  out.kernel_decisions = in.kernel_decisions();
  out.kernel_decisions_unmatched = in.kernel_decisions_unmatched();
  return out;
}

void CostToProto(const PolicyCost& cost, absl::string_view policy,
                 v1::AbPolicyCost& out) {
  out.set_cpus_scanned_total(cost.cpus_scanned_total);
  if (cost.cpus_scanned_per_cpu_second.has_value()) {
    out.set_cpus_scanned_per_cpu_second(*cost.cpus_scanned_per_cpu_second);
  }
  if (cost.cpus_scanned_vs_reference.has_value()) {
    out.set_cpus_scanned_vs_reference(*cost.cpus_scanned_vs_reference);
  }
  out.set_scan_ns_total(cost.scan_ns_total);
  if (cost.scan_time_share.has_value()) {
    out.set_scan_time_share(*cost.scan_time_share);
  }
  if (cost.scan_time_vs_reference.has_value()) {
    out.set_scan_time_vs_reference(*cost.scan_time_vs_reference);
  }
  const SeedCost* seed = SeedCostOf(policy);
  if (seed == nullptr) return;
  const SeedRatio ratio = SeedVsFullScan(*seed);
  v1::AbSeedCost& s = *out.mutable_seed();
  s.set_cycles_pct_numa_balancing_off(seed->cycles_pct_numa_balancing_off);
  s.set_vs_full_scan_numa_balancing_off(ratio.numa_balancing_off);
  s.set_cycles_pct_numa_balancing_on(seed->cycles_pct_numa_balancing_on);
  s.set_vs_full_scan_numa_balancing_on(ratio.numa_balancing_on);
}

v1::AbPolicy PolicyToProto(const PolicyResult& policy, const PolicyCost& cost) {
  v1::AbPolicy out;
  *out.mutable_report() = PolicyReportToProto(policy.report);
  out.mutable_report()->set_policy(ValidUtf8(policy.report.name));
  for (const HistogramBin& bin : policy.cpus_scanned_histogram) {
    v1::AbHistogramBin& b = *out.add_cpus_scanned_histogram();
    b.set_cpus_scanned(bin.cpus_scanned);
    b.set_scans(bin.scans);
  }
  CostToProto(cost, policy.report.name, *out.mutable_cost());
  return out;
}

PolicyResult PolicyFromProto(const v1::AbPolicy& policy) {
  PolicyResult out;
  out.report = PolicyReportFromProto(policy.report());
  for (const v1::AbHistogramBin& bin : policy.cpus_scanned_histogram()) {
    out.cpus_scanned_histogram.push_back({bin.cpus_scanned(), bin.scans()});
  }
  return out;
}

v1::AbProcess ProcessToProto(const ProcessResult& p) {
  v1::AbProcess out;
  out.set_tgid(p.tgid);
  out.set_comm(ValidUtf8(p.comm));
  out.set_runtime_ns(p.runtime_ns);
  for (const int llc : p.final_preferred_llc) {
    out.add_final_preferred_llc(llc);
  }
  for (const std::vector<LlcChange>& timeline : p.preferred_llc_over_time) {
    v1::AbTimeline& t = *out.add_preferred_llc_over_time();
    for (const LlcChange& change : timeline) {
      v1::AbLlcChange& c = *t.add_changes();
      c.set_timestamp_ns(change.timestamp_ns);
      c.set_llc(change.llc);
    }
  }
  for (const KernelProcessCounts& counts : p.kernel) {
    v1::AbKernelCounts& k = *out.add_kernel();
    k.set_kernel_scans(counts.kernel_scans);
    k.set_scans(counts.scans);
    k.set_agreements(counts.agreements);
  }
  return out;
}

// CheckLlc is OK for an LLC id or kNoPreferredLlc; else InvalidArgument
// naming `field`.
absl::Status CheckLlc(int llc, const std::string& field) {
  if (llc >= kNoPreferredLlc) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": ", llc, " is not an LLC id (>= 0) nor -1 (no LLC)"));
}

absl::StatusOr<ProcessResult> ProcessFromProto(const v1::AbProcess& p,
                                               size_t index) {
  const std::string at = absl::StrCat("processes[", index, "]");
  ProcessResult out;
  out.tgid = p.tgid();
  out.comm = p.comm();
  out.runtime_ns = p.runtime_ns();
  for (int i = 0; i < p.final_preferred_llc_size(); ++i) {
    RETURN_IF_ERROR(CheckLlc(p.final_preferred_llc(i),
                             absl::StrCat(at, ".finalPreferredLlc[", i, "]")));
    out.final_preferred_llc.push_back(p.final_preferred_llc(i));
  }
  for (int i = 0; i < p.preferred_llc_over_time_size(); ++i) {
    std::vector<LlcChange>& timeline = out.preferred_llc_over_time.emplace_back();
    const v1::AbTimeline& t = p.preferred_llc_over_time(i);
    for (int j = 0; j < t.changes_size(); ++j) {
      RETURN_IF_ERROR(CheckLlc(
          t.changes(j).llc(),
          absl::StrCat(at, ".preferredLlcOverTime[", i, "].changes[", j,
                       "].llc")));
      timeline.push_back({t.changes(j).timestamp_ns(), t.changes(j).llc()});
    }
  }
  for (const v1::AbKernelCounts& k : p.kernel()) {
    out.kernel.push_back({k.kernel_scans(), k.scans(), k.agreements()});
  }
  return out;
}

}  // namespace

v1::AbReport AbResultToProto(const AbResult& result) {
  v1::AbReport out;
  *out.mutable_input() = InputToProto(result.input);
  const ResultCost cost = ComputeCost(result);
  for (size_t i = 0; i < result.policies.size(); ++i) {
    *out.add_policies() = PolicyToProto(result.policies[i], cost.policies[i]);
  }
  for (const ProcessResult& process : result.processes) {
    *out.add_processes() = ProcessToProto(process);
  }
  for (const LlcPlace& place : result.llcs) {
    v1::AbLlcPlace& l = *out.add_llcs();
    l.set_llc(place.llc);
    l.set_package(place.package);
    l.set_numa_node(place.numa_node);
    l.set_cpus(place.cpus);
  }
  v1::AbLastScan& last = *out.mutable_busiest_last_scan();
  last.set_tgid(result.busiest_last_scan.tgid);
  for (const std::vector<LlcOccupancy>& scan :
       result.busiest_last_scan.per_policy) {
    v1::AbScanOccupancy& s = *last.add_per_policy();
    for (const LlcOccupancy& llc : scan) {
      v1::LlcOccupancy& o = *s.add_llcs();
      o.set_llc(llc.llc);
      o.set_occupancy(llc.occupancy);
    }
  }
  out.set_reference(ValidUtf8(result.policies[0].report.name));
  out.set_cpu_time_ns(cost.cpu_time_ns);
  return out;
}

absl::StatusOr<AbResult> AbResultFromProto(const v1::AbReport& report) {
  AbResult result;
  result.input = InputFromProto(report.input());
  for (const v1::AbPolicy& policy : report.policies()) {
    result.policies.push_back(PolicyFromProto(policy));
  }
  for (int i = 0; i < report.processes_size(); ++i) {
    ASSIGN_OR_RETURN(ProcessResult process,
                     ProcessFromProto(report.processes(i), i));
    result.processes.push_back(std::move(process));
  }
  for (const v1::AbLlcPlace& l : report.llcs()) {
    result.llcs.push_back({l.llc(), l.package(), l.numa_node(), l.cpus()});
  }
  const v1::AbLastScan& last = report.busiest_last_scan();
  result.busiest_last_scan.tgid = last.tgid();
  for (const v1::AbScanOccupancy& scan : last.per_policy()) {
    std::vector<LlcOccupancy>& llcs =
        result.busiest_last_scan.per_policy.emplace_back();
    for (const v1::LlcOccupancy& o : scan.llcs()) {
      llcs.push_back({static_cast<int>(o.llc()), o.occupancy()});
    }
  }
  RETURN_IF_ERROR(ValidateAbResult(result));
  return result;
}

absl::Status WriteJson(const AbResult& result, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbResult(result));
  ASSIGN_OR_RETURN(const std::string json,
                   MessageToJson(AbResultToProto(result)));
  out << json << "\n";
  return report_internal::StreamStatus(out, "the JSON report");
}

}  // namespace schedcache::ab
