#include "eval/report/policy_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace schedcache {
namespace {

// Share is part / whole, or none when whole is 0.
std::optional<double> Share(double part, double whole) {
  if (whole <= 0) return std::nullopt;
  return part / whole;
}

// Total recovers a distribution's sum: its mean is that sum over count,
// computed in double, so rounding gives the exact sum back for any count
// of CPUs a run can reach.
double Total(const v1::Distribution& d) {
  return d.mean() * static_cast<double>(d.count());
}

int64_t CpuTimeNs(const v1::AbReport& report) {
  int64_t total = 0;
  for (const v1::AbProcess& p : report.processes()) {
    const int64_t runtime = std::max<int64_t>(p.runtime_ns(), 0);
    total = total > INT64_MAX - runtime ? INT64_MAX : total + runtime;
  }
  return total;
}

}  // namespace

const SeedCost* SeedCostOf(absl::string_view name) {
  for (const SeedCost& cost : kSeedCosts) {
    if (cost.policy == name) return &cost;
  }
  return nullptr;
}

SeedRatio SeedVsFullScan(const SeedCost& cost) {
  const SeedCost& full = kSeedCosts[0];
  return SeedRatio{
      cost.cycles_pct_numa_balancing_off / full.cycles_pct_numa_balancing_off,
      cost.cycles_pct_numa_balancing_on / full.cycles_pct_numa_balancing_on};
}

ResultCost ComputeCost(const v1::AbReport& report) {
  ResultCost cost;
  cost.cpu_time_ns = CpuTimeNs(report);
  const double cpu_seconds = static_cast<double>(cost.cpu_time_ns) / 1e9;
  const v1::PolicyReport& reference = report.policies(0).report();
  const double reference_cpus =
      static_cast<double>(std::llround(Total(reference.cpus_scanned())));
  const double reference_scan_ns = Total(reference.scan_ns());
  for (const v1::AbPolicy& policy : report.policies()) {
    const v1::PolicyReport& r = policy.report();
    PolicyCost& c = cost.policies.emplace_back();
    c.cpus_scanned_total = std::llround(Total(r.cpus_scanned()));
    c.scan_ns_total = Total(r.scan_ns());
    const double cpus = static_cast<double>(c.cpus_scanned_total);
    c.cpus_scanned_per_cpu_second = Share(cpus, cpu_seconds);
    c.scan_time_share =
        Share(c.scan_ns_total, static_cast<double>(cost.cpu_time_ns));
    c.cpus_scanned_vs_reference = Share(cpus, reference_cpus);
    c.scan_time_vs_reference = Share(c.scan_ns_total, reference_scan_ns);
  }
  return cost;
}

}  // namespace schedcache
