#include "eval/report/policy_table.h"

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace schedcache {

absl::Status ValidateAbResult(const AbResult& result) {
  if (result.policies.empty()) {
    return absl::InvalidArgumentError("AbResult.policies is empty");
  }
  const size_t n = result.policies.size();
  for (const ProcessResult& p : result.processes) {
    if (p.final_preferred_llc.size() != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "processes[tgid=%d].final_preferred_llc has %d entries, want one "
          "per policy (%d)",
          p.tgid, p.final_preferred_llc.size(), n));
    }
    if (!p.preferred_llc_over_time.empty() &&
        p.preferred_llc_over_time.size() != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "processes[tgid=%d].preferred_llc_over_time has %d entries, want "
          "none or one per policy (%d)",
          p.tgid, p.preferred_llc_over_time.size(), n));
    }
  }
  return absl::OkStatus();
}

namespace {

std::string Fixed(double value, int decimals) {
  return absl::StrFormat("%.*f", decimals, value);
}

std::string Micros(double ns) { return Fixed(ns / 1000.0, 2); }

std::string Percent(double share) { return Fixed(share * 100.0, 2); }

}  // namespace

PolicyTable BuildPolicyTable(const AbResult& result) {
  const std::string cpus = "CPUs scanned";
  const std::string scans = "scans";
  const std::string time = "scan time (us)";
  const std::string versus = absl::StrCat("vs ", result.policies[0].report.name);
  const std::string llc = "preferred LLC";
  PolicyTable table;
  table.columns = {
      {"", "policy", "policy", false},
      {cpus, "mean", "cpus_scanned_mean"},
      {cpus, "p50", "cpus_scanned_p50"},
      {cpus, "p99", "cpus_scanned_p99"},
      {cpus, "max", "cpus_scanned_max"},
      {scans, "executed", "scans"},
      {scans, "skipped", "scans_skipped"},
      {scans, "aborted", "scans_aborted"},
      {time, "mean", "scan_us_mean"},
      {time, "p99", "scan_us_p99"},
      {versus, "decisions", "decisions"},
      {versus, "agree(%)", "agreement_pct"},
      {llc, "changes", "preferred_llc_changes"},
      {llc, "runtime on(%)", "runtime_on_preferred_llc_pct"},
  };
  for (const PolicyResult& policy : result.policies) {
    const PolicyReport& r = policy.report;
    table.rows.push_back({
        r.name,
        Fixed(r.cpus_scanned.mean, 1),
        absl::StrCat(r.cpus_scanned.p50),
        absl::StrCat(r.cpus_scanned.p99),
        absl::StrCat(r.cpus_scanned.max),
        absl::StrCat(r.scans),
        absl::StrCat(r.scans_skipped),
        absl::StrCat(r.scans_aborted),
        Micros(r.scan_ns.mean),
        Micros(static_cast<double>(r.scan_ns.p99)),
        absl::StrCat(r.decisions),
        // No decisions: nothing to agree on, so no share to show (a
        // policy that skipped every scan is not "100% in agreement").
        r.agreement.has_value() ? Percent(*r.agreement) : std::string("-"),
        absl::StrCat(r.preferred_llc_changes),
        Percent(r.runtime_on_preferred_llc),
    });
  }
  return table;
}

}  // namespace schedcache
