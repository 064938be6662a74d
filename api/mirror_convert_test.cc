// mirror_convert: what `schedcache mirror` hands the BPF maps' mirror from
// the watch stream and the topology answer.
#include "api/mirror_convert.h"

#include <cstdint>
#include <vector>

#include "bpfmaps/schedcache_maps.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(ToMirroredChange, TakesEveryFieldAndTheReasonAsIs) {
  v1::PreferenceChange change;
  change.set_tgid(42);
  change.set_new_llc(-1);
  change.set_new_cpu(-1);
  change.set_reason(v1::NO_PREFERENCE_REASON_EXITED);
  change.set_incarnation(7);
  change.set_sequence(9);
  const MirroredChange got = ToMirroredChange(change);
  EXPECT_EQ(got.tgid, 42u);
  EXPECT_EQ(got.llc, -1);
  EXPECT_EQ(got.cpu, -1);
  // The maps' code for "exited" is the API's (schedcache_maps_reason_test).
  EXPECT_EQ(got.reason, uint32_t{SCHEDCACHE_REASON_EXITED});
  EXPECT_EQ(got.incarnation, 7u);
  EXPECT_EQ(got.sequence, 9u);
}

TEST(ToMirroredPreference, TakesTheSnapshotEntry) {
  v1::PreferenceChange entry;
  entry.set_snapshot(true);
  entry.set_tgid(5);
  entry.set_new_llc(2);
  entry.set_new_cpu(17);
  const MirroredPreference got = ToMirroredPreference(entry);
  EXPECT_EQ(got.tgid, 5u);
  EXPECT_EQ(got.llc, 2);
  EXPECT_EQ(got.cpu, 17);
}

TEST(ToLlcCpuLists, IndexesByLlcIdAndLeavesOutIdsPastTheCount) {
  v1::Topology topology;
  v1::Llc* second = topology.add_llcs();
  second->set_id(1);
  second->add_cpus(2);
  second->add_cpus(3);
  v1::Llc* first = topology.add_llcs();
  first->set_id(0);
  first->add_cpus(0);
  v1::Llc* stray = topology.add_llcs();
  stray->set_id(9);  // not below the count of 3: left out
  stray->add_cpus(8);
  const LlcCpuLists lists = ToLlcCpuLists(topology);
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[0], (std::vector<uint32_t>{0}));
  EXPECT_EQ(lists[1], (std::vector<uint32_t>{2, 3}));
  EXPECT_TRUE(lists[2].empty());
}

}  // namespace
}  // namespace schedcache
