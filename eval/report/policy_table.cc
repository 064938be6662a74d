#include "eval/report/policy_table.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "eval/report/policy_cost.h"

namespace schedcache {

namespace {

// PerPolicyListError is InvalidArgument naming `owner`'s list `field` of
// `size` entries unless it has one per policy (`policies`), or none when
// `optional`; OK otherwise.
absl::Status PerPolicyListError(const std::string& owner,
                                absl::string_view field, int size,
                                int policies, bool optional) {
  if (size == policies || (optional && size == 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s.%s has %d entries, want %sone per policy (%d)", owner, field, size,
      optional ? "none or " : "", policies));
}

}  // namespace

absl::Status ValidateAbReport(const v1::AbReport& report) {
  if (report.policies().empty()) {
    return absl::InvalidArgumentError("AbReport.policies is empty");
  }
  const int n = report.policies_size();
  for (const v1::AbProcess& p : report.processes()) {
    const std::string owner = absl::StrCat("processes[tgid=", p.tgid(), "]");
    RETURN_IF_ERROR(PerPolicyListError(owner, "final_preferred_llc",
                                       p.final_preferred_llc_size(), n, false));
    RETURN_IF_ERROR(
        PerPolicyListError(owner, "kernel", p.kernel_size(), n, true));
    RETURN_IF_ERROR(PerPolicyListError(owner, "preferred_llc_over_time",
                                       p.preferred_llc_over_time_size(), n,
                                       true));
  }
  for (const v1::AbCacheGroup& g : report.cache_groups()) {
    const std::string owner = absl::StrCat("cache_groups[id=", g.id(), "]");
    RETURN_IF_ERROR(PerPolicyListError(owner, "final_preferred_llc",
                                       g.final_preferred_llc_size(), n, false));
    RETURN_IF_ERROR(PerPolicyListError(owner, "runtime_on_preferred_llc_ns",
                                       g.runtime_on_preferred_llc_ns_size(), n,
                                       true));
  }
  return absl::OkStatus();
}

namespace {

std::string Fixed(double value, int decimals) {
  return absl::StrFormat("%.*f", decimals, value);
}

std::string Micros(double ns) { return Fixed(ns / 1000.0, 2); }

std::string Percent(double share) { return Fixed(share * 100.0, 2); }

// kNone fills a cell with nothing to show.
constexpr char kNone[] = "-";

// Three significant digits, trailing zeros kept: 1.00x, 0.450x, 0.0156x.
std::string Ratio(double ratio) { return absl::StrFormat("%#.3gx", ratio); }

// OrNone formats `value` with `format`, or kNone when there is none.
template <typename Format>
std::string OrNone(const std::optional<double>& value, Format format) {
  return value.has_value() ? format(*value) : std::string(kNone);
}

// Agreement and KernelAgreement are the shares a report holds only when
// there was something to agree on.
std::optional<double> Agreement(const v1::PolicyReport& r) {
  if (!r.has_agreement()) return std::nullopt;
  return r.agreement();
}

std::optional<double> KernelAgreement(const v1::PolicyReport& r) {
  if (!r.has_kernel_agreement()) return std::nullopt;
  return r.kernel_agreement();
}

// SmallPercent keeps three significant digits, trailing zeros too: the
// model's scan time is a tiny share of the CPU time, and two decimals
// would show 0.00.
std::string SmallPercent(double share) {
  return absl::StrFormat("%#.3g", share * 100.0);
}

// AddKernelColumns appends the "at kernel scans" group: the kernel's scans,
// the policy's own scans of the same processes, and the share of the
// kernel's scans at which both preferred the same LLC (docs/EVALUATION.md).
// Not "vs kernel": with `kernel` as the reference that names the
// reference's group, agreement at the model's triggers.
void AddKernelColumns(absl::Span<const v1::PolicyReport* const> policies,
                      PolicyTable& table) {
  const std::string kernel = "at kernel scans";
  table.columns.insert(table.columns.end(),
                       {{kernel, "kernel", "kernel_scans"},
                        {kernel, "own", "kernel_process_scans"},
                        {kernel, "agree(%)", "kernel_agreement_pct"}});
  for (size_t i = 0; i < policies.size(); ++i) {
    const v1::PolicyReport& r = *policies[i];
    table.rows[i].insert(table.rows[i].end(),
                         {absl::StrCat(r.kernel_scans()),
                          absl::StrCat(r.kernel_process_scans()),
                          OrNone(KernelAgreement(r), Percent)});
  }
}

// ReportsOf lists `report`'s policy reports, in session order.
std::vector<const v1::PolicyReport*> ReportsOf(const v1::AbReport& report) {
  std::vector<const v1::PolicyReport*> reports;
  for (const v1::AbPolicy& policy : report.policies()) {
    reports.push_back(&policy.report());
  }
  return reports;
}

}  // namespace

PolicyTable BuildPolicyTable(const v1::AbReport& report) {
  return BuildPolicyTable(ReportsOf(report), SawKernelDecisions(report.input()));
}

PolicyTable BuildPolicyTable(absl::Span<const v1::PolicyReport* const> policies,
                             bool kernel) {
  const std::string cpus = "CPUs scanned";
  const std::string scans = "scans";
  const std::string time = "scan time (us)";
  const std::string versus = absl::StrCat("vs ", policies[0]->policy());
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
  for (const v1::PolicyReport* policy : policies) {
    const v1::PolicyReport& r = *policy;
    table.rows.push_back({
        r.policy(),
        Fixed(r.cpus_scanned().mean(), 1),
        absl::StrCat(r.cpus_scanned().p50()),
        absl::StrCat(r.cpus_scanned().p99()),
        absl::StrCat(r.cpus_scanned().max()),
        absl::StrCat(r.scans()),
        absl::StrCat(r.scans_skipped()),
        absl::StrCat(r.scans_aborted()),
        Micros(r.scan_ns().mean()),
        Micros(static_cast<double>(r.scan_ns().p99())),
        absl::StrCat(r.decisions()),
        // No decisions: nothing to agree on, so no share to show (a
        // policy that skipped every scan is not "100% in agreement").
        OrNone(Agreement(r), Percent),
        absl::StrCat(r.preferred_llc_changes()),
        Percent(r.runtime_on_preferred_llc()),
    });
  }
  if (kernel) AddKernelColumns(policies, table);
  return table;
}

std::string CostTableCaption(const v1::AbReport& report) {
  return absl::StrFormat(
      "cost over %.6f s of simulated CPU time (the runtime of all samples); "
      "scan time is the model's own on this machine, not the kernel's; "
      "seed: perf top -e cycles:k, 2-socket EPYC 9654, valkey-benchmark at "
      "400000 rps",
      static_cast<double>(ComputeCost(report).cpu_time_ns) / 1e9);
}

PolicyTable BuildCostTable(const v1::AbReport& report) {
  const std::string work = "work rate (machine-independent)";
  const std::string model = "model scan time, this machine";
  const std::string seed = "seed: kernel task_cache_work, % of cycles";
  const std::string versus =
      absl::StrCat("vs ", report.policies(0).report().policy());
  PolicyTable table;
  table.columns = {
      {"", "policy", "policy", false},
      {work, "CPUs scanned", "cpus_scanned_total"},
      {work, "per CPU-s", "cpus_scanned_per_cpu_second"},
      {work, versus, "cpus_scanned_vs_reference"},
      {model, "total (us)", "scan_us_total"},
      {model, "% of CPU time", "scan_time_cpu_pct"},
      {model, versus, "scan_time_vs_reference"},
      {seed, "NUMA bal. off", "seed_cycles_pct_numa_balancing_off"},
      {seed, "vs full-scan", "seed_numa_balancing_off_vs_full_scan"},
      {seed, "NUMA bal. on", "seed_cycles_pct_numa_balancing_on"},
      {seed, "vs full-scan", "seed_numa_balancing_on_vs_full_scan"},
  };
  const ResultCost cost = ComputeCost(report);
  for (size_t i = 0; i < cost.policies.size(); ++i) {
    const PolicyCost& c = cost.policies[i];
    const std::string& name = report.policies(static_cast<int>(i)).report().policy();
    std::vector<std::string> row = {
        name,
        absl::StrCat(c.cpus_scanned_total),
        OrNone(c.cpus_scanned_per_cpu_second, [](double v) { return Fixed(v, 1); }),
        OrNone(c.cpus_scanned_vs_reference, Ratio),
        Micros(c.scan_ns_total),
        OrNone(c.scan_time_share, SmallPercent),
        OrNone(c.scan_time_vs_reference, Ratio),
    };
    const SeedCost* measured = SeedCostOf(name);
    if (measured == nullptr) {
      row.insert(row.end(), 4, kNone);
    } else {
      const SeedRatio ratio = SeedVsFullScan(*measured);
      row.insert(row.end(), {Fixed(measured->cycles_pct_numa_balancing_off, 2),
                             Ratio(ratio.numa_balancing_off),
                             Fixed(measured->cycles_pct_numa_balancing_on, 2),
                             Ratio(ratio.numa_balancing_on)});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

PolicyTable BuildCacheGroupTable(const v1::AbReport& report,
                                 int members_shown) {
  PolicyTable table;
  table.columns = {{"", "group", "group", false},
                   {"", "id", "id", true},
                   {"", "members", "members", false},
                   {"", "runtime (s)", "runtime_s", true}};
  for (const v1::AbPolicy& policy : report.policies()) {
    table.columns.push_back({"preferred LLC at the end", policy.report().policy(),
                             absl::StrCat("final_llc_", policy.report().policy()),
                             true});
  }
  for (const v1::AbPolicy& policy : report.policies()) {
    table.columns.push_back(
        {"runtime on preferred LLC (%)", policy.report().policy(),
         absl::StrCat("runtime_on_preferred_llc_pct_", policy.report().policy()),
         true});
  }
  for (const v1::AbCacheGroup& group : report.cache_groups()) {
    const int shown = std::min(group.member_tgids_size(), members_shown);
    std::string members = absl::StrJoin(group.member_tgids().begin(),
                                        group.member_tgids().begin() + shown,
                                        ",");
    if (group.member_tgids_size() > shown) {
      absl::StrAppend(&members, " +", group.member_tgids_size() - shown);
    }
    std::vector<std::string> row = {
        group.name().empty() ? absl::StrCat(group.id()) : group.name(),
        absl::StrCat(group.id()), members,
        Fixed(static_cast<double>(group.runtime_ns()) / 1e9, 3)};
    for (const int llc : group.final_preferred_llc()) {
      row.push_back(llc < 0 ? kNone : absl::StrCat(llc));
    }
    // The share of the group's runtime; "-" without runtime, or when the
    // session's report left the group out (no entries).
    for (int i = 0; i < report.policies_size(); ++i) {
      const bool known = group.runtime_ns() > 0 &&
                         i < group.runtime_on_preferred_llc_ns_size();
      row.push_back(known ? Percent(static_cast<double>(
                                        group.runtime_on_preferred_llc_ns(i)) /
                                    static_cast<double>(group.runtime_ns()))
                          : kNone);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace schedcache
