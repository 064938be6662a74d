#include "policies/testing/group_engine.h"

#include <utility>

#include "gtest/gtest.h"
#include "policies/testing/engine_harness.h"

namespace schedcache::test_support {

GroupEngine::GroupEngine(EngineOptions options) {
  options.trigger = ScanTrigger::kQuery;
  engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 2}), options,
                          {"full-scan", "visited-scan", "none"});
  engine->SetChangeListener([this](const PreferenceChange& c) {
    changes.emplace_back(c.tgid, std::string(c.policy), c.old_llc, c.new_llc,
                         c.reason, c.cache_group);
  });
}

void GroupEngine::Run(int64_t ts, int cpu, int32_t tgid, int32_t tid,
                      int64_t delta, bool tick, uint64_t group,
                      int32_t nr_threads, int64_t footprint_pages) {
  Sample s = SampleAt(ts, cpu, tgid, tid, delta, tick, nr_threads);
  s.cache_group = group;
  s.footprint_pages = footprint_pages;
  const absl::Status applied = engine->ApplySample(s);
  ASSERT_TRUE(applied.ok()) << applied;
}

std::vector<PolicyDecision> GroupEngine::Decisions(int32_t tgid) {
  RecommendRequest request;
  request.tgid = tgid;
  absl::StatusOr<std::vector<PolicyDecision>> d = engine->Recommend(request);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : std::vector<PolicyDecision>{};
}

void FeedSpread(GroupEngine& t, uint64_t group) {
  t.Run(0, 0, 10, 11, 300000, false, group);
  t.Run(0, 2, 10, 11, 100000, false, group);
  t.Run(0, 1, 20, 21, 100000, false, group);
  t.Run(0, 3, 20, 21, 250000, false, group);
  const int64_t fill = (int64_t{1} << 20) - 1;
  const int64_t mine[] = {300000, 100000, 100000, 250000};
  for (int cpu = 0; cpu < 4; ++cpu) {
    t.Run(0, cpu, 99, 991 + cpu, fill - mine[cpu], false, kOwnCacheGroup, 4);
  }
}

}  // namespace schedcache::test_support
