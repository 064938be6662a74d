// GroupEngine: the engine the cache-group tests share (docs/MODEL.md, Cache
// groups), on "1 node x 2 LLCs x 2 CPUs" (LLC 0 = CPUs 0-1, LLC 1 = CPUs
// 2-3, 32 MiB = 8192 pages each) with the query trigger, so scans run only
// where a test asks; and FeedSpread, the occupancy most of them start from.
#ifndef SCHEDCACHE_POLICIES_TESTING_GROUP_ENGINE_H_
#define SCHEDCACHE_POLICIES_TESTING_GROUP_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "policies/engine.h"

namespace schedcache::test_support {

// GroupChange is what a test checks of a PreferenceChange: tgid, policy,
// old and new LLC, reason and cache group.
using GroupChange = std::tuple<int32_t, std::string, int, int,
                               NoPreferenceReason, uint64_t>;

// GroupEngine is a query-trigger engine on the small grid with full-scan,
// visited-scan and none, recording every change.
struct GroupEngine {
  explicit GroupEngine(EngineOptions options = {});
  // Run applies a sample of `tid` of `tgid` in cache group `group` (a
  // failure fails the test).
  void Run(int64_t ts, int cpu, int32_t tgid, int32_t tid, int64_t delta,
           bool tick, uint64_t group, int32_t nr_threads = 2,
           int64_t footprint_pages = kUnchangedFootprint);
  // Decisions is Recommend for `tgid` without a scan (empty on error).
  std::vector<PolicyDecision> Decisions(int32_t tgid);

  std::unique_ptr<Engine> engine;
  std::vector<GroupChange> changes;
};

// FeedSpread runs process 10 (threads 11, 12) and process 20 (21, 22) at
// t = 0, both in `group`: 10 for 300000 ns on CPU 0 and 100000 on CPU 2,
// 20 for 100000 on CPU 1 and 250000 on CPU 3. Process 99 (4 threads, its
// own group) fills every CPU to 2^20 - 1 ns, so an occupancy, NICE_0_LOAD
// * runtime / (cpu_runtime + 1) = 2^20 * r / 2^20, is the runtime r.
void FeedSpread(GroupEngine& t, uint64_t group);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_POLICIES_TESTING_GROUP_ENGINE_H_
