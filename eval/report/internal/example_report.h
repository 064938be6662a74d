// ExampleReport: a small hand-built schedcache.v1.AbReport shared by the
// report tests — two policies on a 2-LLC, 8-CPU machine (one package, one
// node, 4 CPUs per LLC) and three processes, one of them with a comm that
// needs escaping everywhere; the busiest one's last scans saw both LLCs
// (full-scan) and LLC 1 only (visited-scan). Without the derived figures
// (reference, cpuTimeNs, cost), which no writer reads. ExampleSweep: its
// policies as a sweep's two rows.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::report_internal {

inline constexpr int64_t kExampleStartNs = 2'000'000'000;

// ExampleMessage parses `text`, protobuf's text format of a `Message`.
template <typename Message>
Message ExampleMessage(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

inline constexpr char kExampleInput[] = R"pb(
  description: "workload:redis seed=1"
  topology: "1 package, 2 LLCs, 8 CPUs"
  topology_source: "builtin:test-8"
  samples: 1000
  handovers: 200
  malformed_lines: 2
  malformed_examples: [ "garbage line", "bad, \"quoted\"" ]
  start_ns: 2000000000
  duration_ns: 1000000000
  hz: 250
)pb";

// Distributions are {count, mean, p50, p99, max}.
inline constexpr char kExampleFullScan[] = R"pb(
  policy: "full-scan"
  scans: 10
  scans_skipped: 5
  scans_aborted: 1
  cpus_scanned { count: 10 mean: 8.0 p50: 8 p99: 8 max: 8 }
  llcs_scanned { count: 10 mean: 2.0 p50: 2 p99: 2 max: 2 }
  scan_ns { count: 10 mean: 1500.0 p50: 1400 p99: 2500 max: 3000 }
  decisions: 10
  agreements: 10
  agreement: 1.0
  preferred_llc_changes: 2
  runtime_on_preferred_llc: 0.75
)pb";

// 4 scans of 2 CPUs, 4 of 3, 2 of 8: mean (8 + 12 + 16) / 10 = 3.6.
inline constexpr char kExampleVisitedScan[] = R"pb(
  policy: "visited-scan"
  scans: 10
  scans_skipped: 5
  scans_aborted: 1
  cpus_scanned { count: 10 mean: 3.6 p50: 3 p99: 8 max: 8 }
  llcs_scanned { count: 10 mean: 1.2 p50: 1 p99: 2 max: 2 }
  scan_ns { count: 10 mean: 520.0 p50: 400 p99: 1250 max: 1250 }
  decisions: 10
  agreements: 9
  agreement: 0.9
  preferred_llc_changes: 3
  runtime_on_preferred_llc: 0.6875
)pb";

// Timestamps are kExampleStartNs plus 0, 100, 500, 600 and 900 ms.
inline v1::AbReport ExampleReport() {
  return ExampleMessage<v1::AbReport>(absl::StrCat(
      "input {", kExampleInput, "}\n",
      "policies { report {", kExampleFullScan, "}\n",
      "  cpus_scanned_histogram { cpus_scanned: 8 scans: 10 } }\n",
      "policies { report {", kExampleVisitedScan, "}\n",
      R"pb(
        cpus_scanned_histogram { cpus_scanned: 2 scans: 4 }
        cpus_scanned_histogram { cpus_scanned: 3 scans: 4 }
        cpus_scanned_histogram { cpus_scanned: 8 scans: 2 }
      }
      processes {
        tgid: 100
        comm: "redis-server"
        runtime_ns: 900000000
        final_preferred_llc: [ 1, 1 ]
        preferred_llc_over_time {
          changes { timestamp_ns: 2000000000 llc: 0 }
          changes { timestamp_ns: 2500000000 llc: 1 }
        }
        preferred_llc_over_time {
          changes { timestamp_ns: 2000000000 llc: 0 }
          changes { timestamp_ns: 2600000000 llc: 1 }
        }
      }
      processes {
        tgid: 200
        comm: "a<b&c"
        runtime_ns: 300000000
        final_preferred_llc: [ 0, -1 ]
        preferred_llc_over_time {
          changes { timestamp_ns: 2100000000 llc: 0 }
        }
        preferred_llc_over_time {
          changes { timestamp_ns: 2100000000 llc: 0 }
          changes { timestamp_ns: 2900000000 llc: -1 }
        }
      }
      processes {
        tgid: 300
        comm: "idle, \"x\""
        runtime_ns: 1000000
        final_preferred_llc: [ -1, -1 ]
      }
      llcs { llc: 0 package: 0 numa_node: 0 cpus: 4 }
      llcs { llc: 1 package: 0 numa_node: 0 cpus: 4 }
      busiest_last_scan {
        tgid: 100
        per_policy {
          llcs { llc: 0 occupancy: 262144 }
          llcs { llc: 1 occupancy: 1048576 }
        }
        per_policy { llcs { llc: 1 occupancy: 524288 } }
      }
      )pb"));
}

// PolicyOf is `report`'s policy `i`'s statistics, for a test to change.
inline v1::PolicyReport& PolicyOf(v1::AbReport& report, int i) {
  return *report.mutable_policies(i)->mutable_report();
}

// ExampleSweep: ExampleReport's policies (full-scan 8.0 CPUs mean, p50 8,
// 10 scans, agrees 100%; visited-scan 3.6, p50 3, 10 scans, agrees 90%) at
// timeout 1, and the same at timeout 5 with visited-scan's agreement gone
// (no decisions).
inline v1::SweepReport ExampleSweep() {
  v1::SweepReport sweep = ExampleMessage<v1::SweepReport>(absl::StrCat(
      R"pb(input: "workload:hackbench"
           axes { key: "affinity_timeout_epochs" values: [ "1", "5" ] })pb",
      "\nrows { values: \"1\" input {", kExampleInput, "}\n",
      "  policies {", kExampleFullScan, "}\n",
      "  policies {", kExampleVisitedScan, "} }\n"));
  v1::SweepRow& second = *sweep.add_rows();
  second = sweep.rows(0);
  second.set_values(0, "5");
  second.mutable_policies(1)->clear_agreement();
  return sweep;
}

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_EXAMPLE_REPORT_H_
