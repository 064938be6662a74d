// workload_trace: writes a generated workload as gzip ftrace text for
// bench/ab_end_to_end.py's trace-replay row (bench/workload_trace.h says
// what the trace holds). Prints one JSON object: lines, the generator's
// samples and the last switch's time.
//
//   workload_trace --output=FILE.gz [--workload=redis] [--seed=1]
//       [--duration_ms=1000] [--topology=SOURCE]
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "bench/workload_trace.h"
#include "common/flags_usage.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

ABSL_FLAG(std::string, output, "", "the trace to write (.gz: compressed)");
ABSL_FLAG(std::string, workload, "redis", "redis, valkey or hackbench");
ABSL_FLAG(uint64_t, seed, 1, "the generator's seed");
ABSL_FLAG(int64_t, duration_ms, 1000, "simulated time");
ABSL_FLAG(std::string, topology, std::string(schedcache::kEpyc9654Shape),
          "the topology source (see `schedcache ab --topology`)");

namespace schedcache {
namespace {

absl::Status Write() {
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) {
    return absl::InvalidArgumentError("--output: a trace path is required");
  }
  WorkloadOptions options;
  ASSIGN_OR_RETURN(options.kind, ParseWorkloadKind(absl::GetFlag(FLAGS_workload)));
  options.seed = absl::GetFlag(FLAGS_seed);
  options.duration_ns = absl::GetFlag(FLAGS_duration_ms) * 1'000'000;
  ASSIGN_OR_RETURN(const Topology topology,
                   LoadTopology(absl::GetFlag(FLAGS_topology)));
  ASSIGN_OR_RETURN(const WorkloadTraceStats stats,
                   WriteWorkloadTrace(topology, options, output));
  std::printf("{\"lines\": %lld, \"samples\": %lld, \"last_switch_ns\": %lld}\n",
              static_cast<long long>(stats.lines),
              static_cast<long long>(stats.samples),
              static_cast<long long>(stats.last_switch_ns));
  return absl::OkStatus();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  schedcache::SetFlagsUsage(
      "writes a generated workload as ftrace text for bench/'s trace-replay "
      "measure; prints one JSON object.\nUsage: workload_trace "
      "--output=FILE.gz [--workload=redis] [--seed=N] [--duration_ms=MS] "
      "[--topology=SOURCE]",
      "bench/workload_trace_tool.cc");
  absl::ParseCommandLine(argc, argv);
  if (const absl::Status status = schedcache::Write(); !status.ok()) {
    std::fprintf(stderr, "workload_trace: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
