#include "eval/report/json_report.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "eval/report/internal/json_writer.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/policy_cost.h"
#include "eval/report/policy_table.h"

namespace schedcache {
namespace {

using report_internal::JsonWriter;

void WriteLlc(JsonWriter& json, int llc) {
  if (llc == kNoPreferredLlc) {
    json.Null();
  } else {
    json.Int(llc);
  }
}

void WriteInput(JsonWriter& json, const AbInput& in) {
  json.BeginObject();
  json.Key("description");
  json.String(in.description);
  json.Key("topology");
  json.String(in.topology);
  json.Key("topologySource");
  json.String(in.topology_source);
  json.Key("samples");
  json.Uint(in.samples);
  json.Key("handOvers");
  json.Uint(in.handovers);
  json.Key("malformedLines");
  json.Uint(in.malformed_lines);
  json.Key("malformedExamples");
  json.BeginArray();
  for (const std::string& line : in.malformed_examples) json.String(line);
  json.EndArray();
  json.Key("startNs");
  json.Int(in.start_ns);
  json.Key("durationNs");
  json.Int(in.duration_ns);
  json.Key("hz");
  json.Int(in.hz);
  if (SawKernelDecisions(in)) {
    json.Key("kernelDecisions");
    json.Uint(in.kernel_decisions);
    json.Key("kernelDecisionsUnmatched");
    json.Uint(in.kernel_decisions_unmatched);
  }
  json.EndObject();
}

void OptionalDouble(JsonWriter& json, const std::optional<double>& value) {
  if (value.has_value()) {
    json.Double(*value);
  } else {
    json.Null();
  }
}

// WriteSeed writes the seed's measurement of the policy, or null.
void WriteSeed(JsonWriter& json, const std::string& policy) {
  const SeedCost* seed = SeedCostOf(policy);
  if (seed == nullptr) {
    json.Null();
    return;
  }
  const SeedRatio ratio = SeedVsFullScan(*seed);
  json.BeginObject();
  json.Key("cyclesPctNumaBalancingOff");
  json.Double(seed->cycles_pct_numa_balancing_off);
  json.Key("vsFullScanNumaBalancingOff");
  json.Double(ratio.numa_balancing_off);
  json.Key("cyclesPctNumaBalancingOn");
  json.Double(seed->cycles_pct_numa_balancing_on);
  json.Key("vsFullScanNumaBalancingOn");
  json.Double(ratio.numa_balancing_on);
  json.EndObject();
}

void WriteCost(JsonWriter& json, const PolicyCost& cost,
               const std::string& policy) {
  json.BeginObject();
  json.Key("cpusScannedTotal");
  json.Int(cost.cpus_scanned_total);
  json.Key("cpusScannedPerCpuSecond");
  OptionalDouble(json, cost.cpus_scanned_per_cpu_second);
  json.Key("cpusScannedVsReference");
  OptionalDouble(json, cost.cpus_scanned_vs_reference);
  json.Key("scanNsTotal");
  json.Double(cost.scan_ns_total);
  json.Key("scanTimeShare");
  OptionalDouble(json, cost.scan_time_share);
  json.Key("scanTimeVsReference");
  OptionalDouble(json, cost.scan_time_vs_reference);
  json.Key("seed");
  WriteSeed(json, policy);
  json.EndObject();
}

// WriteKernelAgreement writes a policy's agreement with the kernel.
void WriteKernelAgreement(JsonWriter& json, const PolicyReport& r) {
  json.Key("kernelDecisions");
  json.Uint(r.kernel_decisions);
  json.Key("kernelScans");
  json.Uint(r.kernel_scans);
  json.Key("kernelAgreements");
  json.Uint(r.kernel_agreements);
  json.Key("kernelAgreement");  // null: no kernel scan
  OptionalDouble(json, r.kernel_agreement);
  json.Key("kernelProcessScans");
  json.Uint(r.kernel_process_scans);
}

// WritePolicy writes one policy; `with_kernel`: the input had kernel
// decisions.
void WritePolicy(JsonWriter& json, const PolicyResult& policy,
                 const PolicyCost& cost, bool with_kernel) {
  const PolicyReport& r = policy.report;
  json.BeginObject();
  json.Key("name");
  json.String(r.name);
  json.Key("scans");
  json.Uint(r.scans);
  json.Key("scansSkipped");
  json.Uint(r.scans_skipped);
  json.Key("scansSkippedDisabled");
  json.Uint(r.scans_skipped_disabled);
  json.Key("scansAborted");
  json.Uint(r.scans_aborted);
  json.Key("cpusScanned");
  WriteDistribution(json, r.cpus_scanned);
  json.Key("llcsScanned");
  WriteDistribution(json, r.llcs_scanned);
  json.Key("scanNs");
  WriteDistribution(json, r.scan_ns);
  json.Key("decisions");
  json.Uint(r.decisions);
  json.Key("agreements");
  json.Uint(r.agreements);
  json.Key("agreement");  // null: no decisions, no share to report
  OptionalDouble(json, r.agreement);
  json.Key("preferredLlcChanges");
  json.Uint(r.preferred_llc_changes);
  json.Key("runtimeOnPreferredLlc");
  json.Double(r.runtime_on_preferred_llc);
  if (with_kernel) WriteKernelAgreement(json, r);
  json.Key("cpusScannedHistogram");
  json.BeginArray();
  for (const HistogramBin& bin : policy.cpus_scanned_histogram) {
    json.BeginObject();
    json.Key("cpusScanned");
    json.Int(bin.cpus_scanned);
    json.Key("scans");
    json.Uint(bin.scans);
    json.EndObject();
  }
  json.EndArray();
  json.Key("cost");
  WriteCost(json, cost, r.name);
  json.EndObject();
}

void WriteProcess(JsonWriter& json, const ProcessResult& process,
                  const std::vector<PolicyResult>& policies) {
  json.BeginObject();
  json.Key("tgid");
  json.Int(process.tgid);
  json.Key("comm");
  json.String(process.comm);
  json.Key("runtimeNs");
  json.Int(process.runtime_ns);
  json.Key("preferredLlc");
  json.BeginObject();
  for (size_t i = 0; i < policies.size(); ++i) {
    json.Key(policies[i].report.name);
    WriteLlc(json, process.final_preferred_llc[i]);
  }
  json.EndObject();
  if (!process.preferred_llc_over_time.empty()) {
    json.Key("preferredLlcOverTime");
    json.BeginObject();
    for (size_t i = 0; i < policies.size(); ++i) {
      json.Key(policies[i].report.name);
      json.BeginArray();
      for (const LlcChange& change : process.preferred_llc_over_time[i]) {
        json.BeginObject();
        json.Key("timestampNs");
        json.Int(change.timestamp_ns);
        json.Key("llc");
        WriteLlc(json, change.llc);
        json.EndObject();
      }
      json.EndArray();
    }
    json.EndObject();
  }
  if (!process.kernel.empty()) {
    json.Key("kernel");
    json.BeginObject();
    for (size_t i = 0; i < policies.size(); ++i) {
      json.Key(policies[i].report.name);
      json.BeginObject();
      json.Key("kernelScans");
      json.Uint(process.kernel[i].kernel_scans);
      json.Key("scans");
      json.Uint(process.kernel[i].scans);
      json.Key("agreements");
      json.Uint(process.kernel[i].agreements);
      json.EndObject();
    }
    json.EndObject();
  }
  json.EndObject();
}

}  // namespace

absl::Status WriteJson(const AbResult& result, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbResult(result));
  JsonWriter json;
  json.BeginObject();
  json.Key("reference");
  json.String(result.policies[0].report.name);
  json.Key("input");
  WriteInput(json, result.input);
  const ResultCost cost = ComputeCost(result);
  json.Key("cpuTimeNs");
  json.Int(cost.cpu_time_ns);
  json.Key("policies");
  json.BeginArray();
  for (size_t i = 0; i < result.policies.size(); ++i) {
    WritePolicy(json, result.policies[i], cost.policies[i],
                SawKernelDecisions(result.input));
  }
  json.EndArray();
  json.Key("processes");
  json.BeginArray();
  for (const ProcessResult& process : result.processes) {
    WriteProcess(json, process, result.policies);
  }
  json.EndArray();
  json.EndObject();
  out << json.text() << "\n";
  return report_internal::StreamStatus(out, "the JSON report");
}

}  // namespace schedcache
