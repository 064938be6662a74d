// `--jobs N` (docs/EVALUATION.md): an A/B whose session applies the events
// on a thread of its own gives the result of the one-thread run, on a trace
// (with a malformed line among its events), on a workload (whose generator
// is steered by the reference engine on the feeding thread) and in a sweep.
// Each run feeds more events than EventFeed::kBatchEvents *
// kQueuedBatches, so the queue fills and the reader waits for the session.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/workload_trace.h"
#include "eval/ab/ab_report.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/event_feed.h"
#include "eval/ab/sweep.h"
#include "eval/ab/testing/comparable_report.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "topology/topology_source.h"

namespace schedcache::ab {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr uint64_t kEventsToFillTheQueue =
    EventFeed::kBatchEvents * EventFeed::kQueuedBatches;

const PolicyRegistry& Registry() {
  static const PolicyRegistry* registry =
      new PolicyRegistry(*BuildPolicyRegistry({}));
  return *registry;
}

// RunOn runs `options` on `jobs` threads.
AbResult RunOn(AbOptions options, int jobs) {
  options.jobs = jobs;
  absl::StatusOr<AbResult> result =
      RunAb(options, Registry(), InProcessSessions(Registry()));
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : AbResult{};
}

uint64_t Events(const AbResult& result) {
  return result.input.samples + result.input.handovers;
}

TEST(AbJobs, ATraceGivesTheOneThreadReportOnThreeThreads) {
  absl::StatusOr<Topology> topology = LoadTopology(
      "synthetic:pack:2 numa:1 l3:12 core:8 pu:2");  // the default shape
  ASSERT_TRUE(topology.ok()) << topology.status();
  WorkloadOptions redis;
  redis.duration_ns = 100 * kMs;
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "ab_jobs.trace").string();
  absl::StatusOr<WorkloadTraceStats> written =
      WriteWorkloadTrace(*topology, redis, path);
  ASSERT_TRUE(written.ok()) << written.status();
  // A sched_switch line that does not parse: the input's problem, listed
  // with its line by the session's thread.
  std::ofstream(path, std::ios::app)
      << "  redis-server-7 [003] d..2. 99.000000: sched_switch: garbage\n";
  AbOptions options;
  options.input = AbInputSpec{AbInputSpec::Kind::kTrace, path};

  const AbResult one = RunOn(options, 1);
  const AbResult three = RunOn(options, 3);
  EXPECT_GT(Events(one), kEventsToFillTheQueue);
  EXPECT_EQ(one.input.malformed_lines, 1u);
  EXPECT_EQ(ComparableJson(three), ComparableJson(one));
}

TEST(AbJobs, AWorkloadGivesTheOneThreadReportOnThreeThreads) {
  AbOptions options;
  options.input.kind = AbInputSpec::Kind::kWorkload;
  options.input.workload = WorkloadKind::kRedis;
  options.workload.duration_ns = 100 * kMs;
  const AbResult one = RunOn(options, 1);
  const AbResult three = RunOn(options, 3);
  EXPECT_GT(Events(one), kEventsToFillTheQueue);
  EXPECT_EQ(ComparableJson(three), ComparableJson(one));
}

TEST(AbJobs, ASweepGivesTheOneThreadReportOnThreeThreads) {
  AbOptions base;
  base.input.kind = AbInputSpec::Kind::kWorkload;
  base.input.workload = WorkloadKind::kHackbench;
  base.workload.duration_ns = 50 * kMs;
  absl::StatusOr<SweepPlan> plan = MakeSweepPlan(
      base, {*ParseVary("fds=2,3"), *ParseVary("affinity_timeout_epochs=1,5")},
      Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::string json[2];
  const int jobs[2] = {1, 3};
  for (int i = 0; i < 2; ++i) {
    SweepResult sweep = RunSweep(*plan, Registry(), jobs[i],
                                 "workload:hackbench", nullptr);
    ASSERT_TRUE(sweep.failures.empty()) << sweep.failures[0].error;
    ASSERT_EQ(sweep.rows.size(), 4u);
    for (SweepRow& row : sweep.rows) row.result = WithoutScanTimes(std::move(row.result));
    std::ostringstream out;
    ASSERT_TRUE(WriteSweepJson(SweepResultToProto(sweep), out).ok());
    json[i] = out.str();
  }
  EXPECT_EQ(json[1], json[0]);
}

}  // namespace
}  // namespace schedcache::ab
