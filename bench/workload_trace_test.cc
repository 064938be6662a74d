#include "bench/workload_trace.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/topology_source.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

// Accounting is what a replay must reproduce: who ran where, for how long,
// and which samples are ticks (tgid and comm may lag, see the header).
struct Accounting {
  int64_t timestamp_ns;
  int32_t cpu;
  int32_t tid;
  int64_t delta_ns;
  bool tick;
  bool operator==(const Accounting&) const = default;
};

std::vector<Accounting> AccountingBefore(const std::vector<Sample>& samples,
                                         int64_t end_ns) {
  std::vector<Accounting> out;
  for (const Sample& s : samples) {
    if (s.timestamp_ns >= end_ns) break;
    out.push_back({s.timestamp_ns, s.cpu, s.tid, s.delta_ns, s.tick});
  }
  return out;
}

class WorkloadTraceTest : public ::testing::TestWithParam<WorkloadKind> {};

// The replayed trace makes the generator's samples again, ticks included,
// up to its last line (the generator also ticks after it, to its end).
TEST_P(WorkloadTraceTest, ReplayRepeatsTheGeneratorsAccounting) {
  absl::StatusOr<Topology> topology =
      LoadTopology("synthetic:pack:1 l3:2 core:4 pu:2");
  ASSERT_TRUE(topology.ok()) << topology.status();
  WorkloadOptions options;
  options.kind = GetParam();
  options.duration_ns = 30'000'000;
  RecordingSink generated;
  absl::StatusOr<WorkloadStats> run =
      RunWorkload(*topology, options, PreferredLlcFn(), generated);
  ASSERT_TRUE(run.ok()) << run.status();

  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("workload_trace_test_" + std::to_string(getpid()) + ".trace.gz"))
          .string();
  absl::StatusOr<WorkloadTraceStats> written =
      WriteWorkloadTrace(*topology, options, path);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->lines, run->hand_overs);  // one line per switch
  EXPECT_EQ(written->samples, run->samples);

  RecordingSink replayed;
  TraceOptions trace;
  trace.topology = &*topology;
  absl::StatusOr<ReplayStats> stats = ReplayTraceFile(path, trace, replayed);
  std::filesystem::remove(path);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->switch_events, written->lines);
  // Every line's prev is the thread the CPU was handed to last.
  EXPECT_EQ(stats->prev_mismatches, 0);
  const std::vector<Accounting> expected =
      AccountingBefore(generated.Samples(), written->last_switch_ns);
  // A 30 ms run of either kind switches thousands of times.
  ASSERT_GT(expected.size(), 1000u);
  EXPECT_TRUE(expected ==
              AccountingBefore(replayed.Samples(), written->last_switch_ns));
}

INSTANTIATE_TEST_SUITE_P(Kinds, WorkloadTraceTest,
                         ::testing::Values(WorkloadKind::kRedis,
                                           WorkloadKind::kHackbench),
                         [](const auto& info) {
                           return info.param == WorkloadKind::kRedis
                                      ? "redis"
                                      : "hackbench";
                         });

TEST(WorkloadTrace, NamesThePathItCannotWrite) {
  absl::StatusOr<Topology> topology = LoadTopology("synthetic:pack:1 l3:1 core:2 pu:1");
  ASSERT_TRUE(topology.ok()) << topology.status();
  WorkloadOptions options;
  options.duration_ns = 1'000'000;
  absl::StatusOr<WorkloadTraceStats> written =
      WriteWorkloadTrace(*topology, options, "/nonexistent-dir/w.trace.gz");
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.status().message(),
              ::testing::HasSubstr("/nonexistent-dir/w.trace.gz"));
}

}  // namespace
}  // namespace schedcache
