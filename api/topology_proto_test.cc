#include "api/topology_proto.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(TopologyToProto, CarriesEveryField) {
  // 2 packages of 1 core x 2 threads; package 0 has an L3, package 1 none.
  TopologySpec spec;
  spec.source = "hand-made";
  spec.cpus = {CpuSpec{0, 0, 0, 0}, CpuSpec{1, 0, 0, 0}, CpuSpec{2, 1, 1, 1},
               CpuSpec{3, 1, 1, 1}};
  spec.llcs = {CacheSpec{3, 4096, CpuSet{0, 1}}};
  spec.online = CpuSet{0, 1, 2};
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  ASSERT_TRUE(topo.ok()) << topo.status();

  const v1::Topology msg = TopologyToProto(*topo);
  EXPECT_EQ(msg.source(), "hand-made");
  EXPECT_EQ(msg.total_cpus(), 4u);
  EXPECT_EQ(msg.cores(), 2u);
  EXPECT_EQ(msg.smt_threads(), 2u);
  ASSERT_EQ(msg.packages_size(), 2);
  EXPECT_EQ(msg.packages(1).id(), 1u);
  ASSERT_EQ(msg.packages(1).cpus_size(), 2);
  EXPECT_EQ(msg.packages(1).cpus(0), 2u);
  ASSERT_EQ(msg.numa_nodes_size(), 2);
  EXPECT_EQ(msg.numa_nodes(0).cpus_size(), 2);
  // LLC 0 is the L3 of CPUs 0-1; CPUs 2 and 3 get synthesized LLCs 1 and 2.
  ASSERT_EQ(msg.llcs_size(), 3);
  EXPECT_EQ(msg.llcs(0).level(), 3u);
  EXPECT_EQ(msg.llcs(0).size_bytes(), 4096u);
  EXPECT_EQ(msg.llcs(0).cpus_size(), 2);
  EXPECT_FALSE(msg.llcs(0).synthesized());
  EXPECT_EQ(msg.llcs(2).id(), 2u);
  EXPECT_TRUE(msg.llcs(2).synthesized());
  ASSERT_EQ(msg.llcs(2).cpus_size(), 1);
  EXPECT_EQ(msg.llcs(2).cpus(0), 3u);
  ASSERT_EQ(msg.online_cpus_size(), 3);
  EXPECT_EQ(msg.online_cpus(2), 2u);
  // Node 0 holds LLC 0; node 1 holds the two synthesized LLCs.
  EXPECT_EQ(msg.max_llcs_per_numa_node(), 2u);
}

}  // namespace
}  // namespace schedcache
