// ExampleResult: a small hand-built AbResult shared by the report tests —
// two policies on a 2-LLC, 8-CPU machine (one package, one node, 4 CPUs per
// LLC) and three processes, one of them with a comm that needs escaping
// everywhere; the busiest one's last scans saw both LLCs (full-scan) and
// LLC 1 only (visited-scan). ExampleSweep: two of them as a sweep's rows.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_RESULT_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_RESULT_H_

#include "eval/report/ab_result.h"
#include "eval/report/sweep_result.h"

namespace schedcache::report_internal {

inline constexpr int64_t kExampleStartNs = 2'000'000'000;

inline AbResult ExampleResult() {
  AbResult r;
  r.input.description = "workload:redis seed=1";
  r.input.topology = "1 package, 2 LLCs, 8 CPUs";
  r.input.topology_source = "builtin:test-8";
  r.input.samples = 1000;
  r.input.handovers = 200;
  r.input.malformed_lines = 2;
  r.input.malformed_examples = {"garbage line", "bad, \"quoted\""};
  r.input.start_ns = kExampleStartNs;
  r.input.duration_ns = 1'000'000'000;
  r.input.hz = 250;

  PolicyResult full;
  full.report.name = "full-scan";
  full.report.scans = 10;
  full.report.scans_skipped = 5;
  full.report.scans_aborted = 1;
  full.report.cpus_scanned = {10, 8.0, 8, 8, 8};
  full.report.llcs_scanned = {10, 2.0, 2, 2, 2};
  full.report.scan_ns = {10, 1500.0, 1400, 2500, 3000};
  full.report.decisions = 10;
  full.report.agreements = 10;
  full.report.agreement = 1.0;
  full.report.preferred_llc_changes = 2;
  full.report.runtime_on_preferred_llc = 0.75;
  full.cpus_scanned_histogram = {{8, 10}};

  PolicyResult visited;
  visited.report.name = "visited-scan";
  visited.report.scans = 10;
  visited.report.scans_skipped = 5;
  visited.report.scans_aborted = 1;
  // 4 scans of 2 CPUs, 4 of 3, 2 of 8: mean (8 + 12 + 16) / 10 = 3.6.
  visited.report.cpus_scanned = {10, 3.6, 3, 8, 8};
  visited.report.llcs_scanned = {10, 1.2, 1, 2, 2};
  visited.report.scan_ns = {10, 520.0, 400, 1250, 1250};
  visited.report.decisions = 10;
  visited.report.agreements = 9;
  visited.report.agreement = 0.9;
  visited.report.preferred_llc_changes = 3;
  visited.report.runtime_on_preferred_llc = 0.6875;
  visited.cpus_scanned_histogram = {{2, 4}, {3, 4}, {8, 2}};

  r.policies = {full, visited};

  const int64_t s = kExampleStartNs;
  r.processes = {
      {100, "redis-server", 900'000'000, {1, 1},
       {{{s, 0}, {s + 500'000'000, 1}}, {{s, 0}, {s + 600'000'000, 1}}},
       {}},
      {200, "a<b&c", 300'000'000, {0, kNoPreferredLlc},
       {{{s + 100'000'000, 0}}, {{s + 100'000'000, 0}, {s + 900'000'000, kNoPreferredLlc}}},
       {}},
      {300, "idle, \"x\"", 1'000'000, {kNoPreferredLlc, kNoPreferredLlc}, {}, {}},
  };
  r.llcs = {{0, 0, 0, 4}, {1, 0, 0, 4}};
  r.busiest_last_scan = {100, {{{0, 262144}, {1, 1048576}}, {{1, 524288}}}};
  return r;
}

// ExampleSweep: ExampleResult (full-scan 8.0 CPUs mean, p50 8, 10 scans,
// agrees 100%; visited-scan 3.6, p50 3, 10 scans, agrees 90%) at timeout 1,
// and the same at timeout 5 with visited-scan's agreement gone (no
// decisions).
inline SweepResult ExampleSweep() {
  SweepResult sweep;
  sweep.input = "workload:hackbench";
  sweep.axes = {{"affinity_timeout_epochs", {"1", "5"}}};
  AbResult second = ExampleResult();
  second.policies[1].report.agreement.reset();
  sweep.rows = {{{"1"}, ExampleResult()}, {{"5"}, second}};
  return sweep;
}

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_RESULT_H_
