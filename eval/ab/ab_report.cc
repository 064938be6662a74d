#include "eval/ab/ab_report.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/proto_convert.h"
#include "api/proto_json.h"
#include "common/status_macros.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/policy_cost.h"
#include "eval/report/policy_table.h"
#include "eval/report/sweep_report.h"

namespace schedcache::ab {
namespace {

// Utf8SequenceLength returns the length of the well-formed UTF-8 sequence
// at the start of `text` (RFC 3629: no overlongs, no surrogates, nothing
// above U+10FFFF), or 0 when the first byte does not start one.
size_t Utf8SequenceLength(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

// ValidUtf8 returns `text` with each byte that starts no well-formed UTF-8
// sequence replaced by U+FFFD: protobuf's strings must be valid UTF-8, and
// a trace's comm or a malformed input line need not be.
std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      text.remove_prefix(1);
    } else {
      out.append(text.data(), length);
      text.remove_prefix(length);
    }
  }
  return out;
}

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

v1::PolicyReport ReportToProto(const PolicyReport& report) {
  v1::PolicyReport out = PolicyReportToProto(report);
  out.set_policy(ValidUtf8(report.name));
  return out;
}

v1::AbPolicy PolicyToProto(const PolicyResult& policy) {
  v1::AbPolicy out;
  *out.mutable_report() = ReportToProto(policy.report);
  for (const HistogramBin& bin : policy.cpus_scanned_histogram) {
    v1::AbHistogramBin& b = *out.add_cpus_scanned_histogram();
    b.set_cpus_scanned(bin.cpus_scanned);
    b.set_scans(bin.scans);
  }
  return out;
}

// FillDerived sets the figures AbReport carries for scripts only: the
// reference's name, the CPU time and each policy's cost.
// REQUIRES: report has a policy.
void FillDerived(v1::AbReport& report) {
  const ResultCost cost = ComputeCost(report);
  for (int i = 0; i < report.policies_size(); ++i) {
    v1::AbPolicy& policy = *report.mutable_policies(i);
    CostToProto(cost.policies[i], policy.report().policy(),
                *policy.mutable_cost());
  }
  report.set_reference(report.policies(0).report().policy());
  report.set_cpu_time_ns(cost.cpu_time_ns);
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

v1::AbCacheGroup CacheGroupToProto(const CacheGroupResult& g) {
  v1::AbCacheGroup out;
  out.set_id(g.id);
  out.set_name(ValidUtf8(g.name));
  for (const int32_t tgid : g.member_tgids) out.add_member_tgids(tgid);
  out.set_runtime_ns(g.runtime_ns);
  for (const int llc : g.final_preferred_llc) out.add_final_preferred_llc(llc);
  for (const int64_t ns : g.runtime_on_preferred_llc_ns) {
    out.add_runtime_on_preferred_llc_ns(ns);
  }
  return out;
}

absl::StatusOr<CacheGroupResult> CacheGroupFromProto(const v1::AbCacheGroup& g,
                                                     size_t index) {
  CacheGroupResult out;
  out.id = g.id();
  out.name = g.name();
  out.member_tgids.assign(g.member_tgids().begin(), g.member_tgids().end());
  out.runtime_ns = g.runtime_ns();
  for (int i = 0; i < g.final_preferred_llc_size(); ++i) {
    RETURN_IF_ERROR(CheckLlc(g.final_preferred_llc(i),
                             absl::StrCat("cacheGroups[", index,
                                          "].finalPreferredLlc[", i, "]")));
    out.final_preferred_llc.push_back(g.final_preferred_llc(i));
  }
  out.runtime_on_preferred_llc_ns.assign(
      g.runtime_on_preferred_llc_ns().begin(),
      g.runtime_on_preferred_llc_ns().end());
  return out;
}

// WriteJsonLine writes `message` as one line of JSON and a newline;
// `what` names it in an error.
absl::Status WriteJsonLine(const google::protobuf::Message& message,
                           std::ostream& out, absl::string_view what) {
  ASSIGN_OR_RETURN(const std::string json, MessageToJson(message));
  out << json << "\n";
  return report_internal::StreamStatus(out, what);
}

}  // namespace

v1::AbReport AbResultToProto(const AbResult& result) {
  v1::AbReport out;
  *out.mutable_input() = InputToProto(result.input);
  for (const PolicyResult& policy : result.policies) {
    *out.add_policies() = PolicyToProto(policy);
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
  for (const CacheGroupResult& group : result.cache_groups) {
    *out.add_cache_groups() = CacheGroupToProto(group);
  }
  if (!out.policies().empty()) FillDerived(out);
  return out;
}

absl::StatusOr<AbResult> AbResultFromProto(const v1::AbReport& report) {
  RETURN_IF_ERROR(ValidateAbReport(report));
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
  for (int i = 0; i < report.cache_groups_size(); ++i) {
    ASSIGN_OR_RETURN(CacheGroupResult group,
                     CacheGroupFromProto(report.cache_groups(i), i));
    result.cache_groups.push_back(std::move(group));
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
  return result;
}

v1::SweepReport SweepResultToProto(const SweepResult& result) {
  v1::SweepReport out;
  out.set_input(ValidUtf8(result.input));
  for (const SweepAxis& axis : result.axes) {
    v1::SweepAxis& a = *out.add_axes();
    a.set_key(ValidUtf8(axis.key));
    for (const std::string& value : axis.values) a.add_values(ValidUtf8(value));
  }
  for (const SweepRow& row : result.rows) {
    v1::SweepRow& r = *out.add_rows();
    for (const std::string& value : row.values) r.add_values(ValidUtf8(value));
    *r.mutable_input() = InputToProto(row.result.input);
    for (const PolicyResult& policy : row.result.policies) {
      *r.add_policies() = ReportToProto(policy.report);
    }
  }
  for (const SweepFailure& failure : result.failures) {
    v1::SweepFailure& f = *out.add_failures();
    for (const std::string& value : failure.values) f.add_values(ValidUtf8(value));
    f.set_error(ValidUtf8(failure.error));
  }
  if (!out.rows().empty() && !out.rows(0).policies().empty()) {
    out.set_reference(out.rows(0).policies(0).policy());
  }
  return out;
}

absl::Status WriteJson(const v1::AbReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbReport(report));
  return WriteJsonLine(report, out, "the JSON report");
}

absl::Status WriteSweepJson(const v1::SweepReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepReport(report, SweepLayout::kSweep));
  return WriteJsonLine(report, out, "the sweep JSON");
}

}  // namespace schedcache::ab
