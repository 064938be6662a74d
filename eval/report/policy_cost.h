// What each policy's scans cost, measured the way the seed measures
// task_cache_work (perf's share of cycles), in two currencies:
//  - work rate: CPUs scanned per second of simulated CPU time. It depends on
//    the model and the input only, never on the machine running the model,
//    so it is the figure to compare between runs and with the kernel.
//  - the model's own scan time (wall time on the machine that ran `ab`) as
//    a share of the simulated CPU time. It is the model's cost here, not the
//    kernel's: only its ratio between policies compares with the seed's.
// Simulated CPU time is the sum of every process's runtime (the runtime of
// all samples the session took), so it survives ab-merge unchanged.
//
// Thread contract: plain values and pure functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_POLICY_COST_H_
#define SCHEDCACHE_EVAL_REPORT_POLICY_COST_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache {

// SeedCost is the seed's measurement of one policy (visited-cpus patch v6,
// `perf top -e cycles:k`, 2-socket EPYC 9654, valkey-benchmark at 400000
// rps): task_cache_work's share of kernel cycles, in percent.
struct SeedCost {
  absl::string_view policy;
  double cycles_pct_numa_balancing_off;
  double cycles_pct_numa_balancing_on;
};

// kSeedCosts holds the seed's two policies; kSeedCosts[0] is full-scan, the
// seed's own reference ("without this series").
inline constexpr SeedCost kSeedCosts[] = {
    {"full-scan", 0.81, 0.13},
    {"visited-scan", 0.02, 0.03},
};

// SeedCostOf returns the seed's figures for policy `name`, or nullptr when
// the seed did not measure that policy.
const SeedCost* SeedCostOf(absl::string_view name);

// SeedRatio is a seed share over the seed's full-scan share, per setting.
struct SeedRatio {
  double numa_balancing_off;
  double numa_balancing_on;
};

// SeedVsFullScan is `cost` against kSeedCosts[0] (visited-scan: 0.02 / 0.81
// = 0.025 with NUMA balancing off, 0.03 / 0.13 = 0.23 with it on).
SeedRatio SeedVsFullScan(const SeedCost& cost);

// PolicyCost is one policy's cost. A ratio is none when the reference's
// value is 0 (nothing to compare against); the shares and rates are none
// when the input has no simulated CPU time.
struct PolicyCost {
  int64_t cpus_scanned_total = 0;  // over executed scans
  double scan_ns_total = 0;        // the model's wall time, this machine
  std::optional<double> cpus_scanned_per_cpu_second;
  std::optional<double> scan_time_share;  // of the simulated CPU time, 0..1
  std::optional<double> cpus_scanned_vs_reference;  // total / reference's
  std::optional<double> scan_time_vs_reference;     // total / reference's
};

// ResultCost is the whole report's cost; policies[i] is report.policies(i)'s.
struct ResultCost {
  int64_t cpu_time_ns = 0;  // simulated CPU time; the sum saturates
  std::vector<PolicyCost> policies;
};

// ComputeCost derives the cost from the policies' scan statistics (count
// times mean of cpus_scanned and scan_ns, exact sums) and the processes'
// runtimes. REQUIRES: ValidateAbReport(report) (policy_table.h) is OK.
ResultCost ComputeCost(const v1::AbReport& report);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_POLICY_COST_H_
