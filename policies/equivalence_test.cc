// visited-scan against full-scan on seeded random streams. When every CPU a
// process uses is revisited within the timeout, the two see the same
// occupancies and must decide identically at every scan; otherwise the
// agreement is measured and printed.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeEngine;
using test_support::MakeGrid;
using test_support::StreamShape;

struct Replayed {
  EngineReport report;
  std::vector<std::vector<std::pair<int32_t, int>>> changes;  // per policy
  std::vector<std::vector<PolicyDecision>> finals;            // per process
};

Replayed Replay(const StreamShape& shape, bool numa_balancing) {
  Replayed run;
  // "2 nodes x 3 LLCs x 4 CPUs": contiguous LLC spans, so both policies
  // meet the LLCs in the same order.
  auto topology = MakeGrid(GridShape{2, 3, 4});
  EngineOptions options;
  options.model.numa_balancing = numa_balancing;
  auto engine = MakeEngine(topology, {"full-scan", "visited-scan"}, options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return run;
  run.changes.resize(2);
  (*engine)->SetChangeListener([&](const PreferenceChange& change) {
    run.changes[change.policy == "full-scan" ? 0 : 1].emplace_back(
        change.tgid, change.new_llc);
  });
  for (const test_support::StreamEvent& event :
       test_support::RandomStream(*topology, shape)) {
    EXPECT_TRUE(test_support::Apply(**engine, event).ok());
  }
  run.report = (*engine)->Report();
  for (int p = 0; p < shape.processes; ++p) {
    RecommendRequest request;
    request.tgid = 100 + p;
    auto d = (*engine)->Recommend(request);
    if (d.ok()) run.finals.push_back(*std::move(d));
  }
  return run;
}

class Equivalence : public ::testing::TestWithParam<std::pair<uint64_t, bool>> {};

TEST_P(Equivalence, VisitedScanDecidesAsFullScanWhenCpusAreRevisited) {
  StreamShape shape;
  shape.seed = GetParam().first;
  shape.revisit = true;
  shape.numa_nodes = GetParam().second;
  const Replayed run = Replay(shape, /*numa_balancing=*/GetParam().second);
  const PolicyReport& visited = run.report.policies[1];
  ASSERT_GT(visited.decisions, 0u);
  // Every trigger the reference did not skip: same preferred LLC after it.
  EXPECT_EQ(visited.agreements, visited.decisions);
  EXPECT_EQ(run.report.policies[0].scans, visited.scans);
  EXPECT_EQ(run.report.policies[0].scans_aborted, visited.scans_aborted);
  EXPECT_EQ(run.changes[0], run.changes[1]);
  for (const std::vector<PolicyDecision>& d : run.finals) {
    EXPECT_EQ(d[0].preferred_cpu, d[1].preferred_cpu);
    EXPECT_EQ(d[0].nr_running_avg, d[1].nr_running_avg);
    EXPECT_EQ(d[0].nr_running, d[1].nr_running);
  }
  // And the point of the series: fewer CPUs scanned.
  EXPECT_LT(visited.cpus_scanned.mean, run.report.policies[0].cpus_scanned.mean);
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, Equivalence,
    ::testing::Values(std::pair<uint64_t, bool>{1, false},
                      std::pair<uint64_t, bool>{2, false},
                      std::pair<uint64_t, bool>{3, false},
                      std::pair<uint64_t, bool>{4, true},
                      std::pair<uint64_t, bool>{5, true},
                      std::pair<uint64_t, bool>{6, true}));

TEST(Equivalence, AgreementOnUnconstrainedStreamsIsMeasured) {
  uint64_t decisions = 0;
  uint64_t agreements = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    StreamShape shape;
    shape.seed = seed;
    shape.revisit = false;
    shape.numa_nodes = seed % 2 == 0;
    const Replayed run = Replay(shape, seed % 2 == 0);
    const PolicyReport& full = run.report.policies[0];
    const PolicyReport& visited = run.report.policies[1];
    std::printf(
        "seed %llu: %llu decisions, agreement %.4f, CPUs scanned mean "
        "full %.1f visited %.1f\n",
        static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(visited.decisions),
        visited.agreement.value_or(-1.0),
        full.cpus_scanned.mean, visited.cpus_scanned.mean);
    decisions += visited.decisions;
    agreements += visited.agreements;
  }
  ASSERT_GT(decisions, 0u);
  std::printf("unconstrained agreement over 8 seeds: %.4f (%llu/%llu)\n",
              static_cast<double>(agreements) / static_cast<double>(decisions),
              static_cast<unsigned long long>(agreements),
              static_cast<unsigned long long>(decisions));
  EXPECT_LE(agreements, decisions);
}

}  // namespace
}  // namespace schedcache
