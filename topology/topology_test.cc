#include "topology/topology.h"

#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// TwoNodeSpec: 2 NUMA nodes of 8 CPUs with SMT 2 (core = cpu / 2), each node
// split into two L3s of 4 CPUs, listed out of order to prove the numbering.
TopologySpec TwoNodeSpec() {
  TopologySpec spec;
  spec.source = "test";
  for (int cpu = 0; cpu < 16; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu / 2, cpu / 8, cpu / 8});
  }
  spec.llcs = {
      CacheSpec{3, 1 << 20, CpuSet::FromRange(12, 15)},
      CacheSpec{3, 1 << 20, CpuSet::FromRange(0, 3)},
      CacheSpec{3, 1 << 20, CpuSet::FromRange(8, 11)},
      CacheSpec{3, 1 << 20, CpuSet::FromRange(4, 7)},
  };
  return spec;
}

TEST(TopologyCreate, NumbersLlcsByLowestCpu) {
  absl::StatusOr<Topology> topo = Topology::Create(TwoNodeSpec());
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->llcs().size(), 4u);
  for (int id = 0; id < 4; ++id) {
    EXPECT_EQ(topo->llcs()[id].id, id);
    EXPECT_EQ(topo->llcs()[id].cpus.First(), 4 * id);
  }
  EXPECT_EQ(topo->LlcOf(13), 3);
  EXPECT_EQ(topo->LlcOf(16), -1);
}

TEST(TopologyCreate, SynthesizesLlcForCpuWithoutCache) {
  TopologySpec spec = TwoNodeSpec();
  spec.llcs.erase(spec.llcs.begin());  // CPUs 12-15 lose their cache
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  ASSERT_TRUE(topo.ok()) << topo.status();
  // 3 real LLCs and one per uncovered CPU.
  ASSERT_EQ(topo->llcs().size(), 7u);
  const Llc& own = topo->llcs()[topo->LlcOf(14)];
  EXPECT_TRUE(own.synthesized);
  EXPECT_EQ(own.level, 0);
  EXPECT_EQ(own.cpus, CpuSet({14}));
  EXPECT_FALSE(topo->llcs()[topo->LlcOf(0)].synthesized);
}

TEST(TopologyCreate, RejectsOverlappingLlcs) {
  TopologySpec spec = TwoNodeSpec();
  spec.llcs.push_back(CacheSpec{3, 0, CpuSet{3, 4}});
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("overlap"));
}

TEST(TopologyCreate, RejectsSpecWithoutCpus) {
  TopologySpec spec;
  spec.source = "empty machine";
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("empty machine"));
}

TEST(TopologyCreate, RejectsRepeatedCpu) {
  TopologySpec spec = TwoNodeSpec();
  spec.cpus.push_back(CpuSpec{5, 99, 0, 0});
  EXPECT_EQ(Topology::Create(std::move(spec)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TopologyCreate, RejectsLlcNamingMissingCpu) {
  TopologySpec spec = TwoNodeSpec();
  spec.llcs.push_back(CacheSpec{3, 0, CpuSet{40}});
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("40"));
}

TEST(TopologyCreate, SmtWidthIsLargestCore) {
  TopologySpec spec = TwoNodeSpec();
  absl::StatusOr<Topology> smt2 = Topology::Create(spec);
  ASSERT_TRUE(smt2.ok());
  EXPECT_EQ(smt2->smt_threads(), 2);
  EXPECT_EQ(smt2->num_cores(), 8);
  for (CpuSpec& cpu : spec.cpus) cpu.core = cpu.os_index;
  absl::StatusOr<Topology> smt1 = Topology::Create(std::move(spec));
  ASSERT_TRUE(smt1.ok());
  EXPECT_EQ(smt1->smt_threads(), 1);
  EXPECT_EQ(smt1->num_cores(), 16);
}

TEST(TopologyCreate, NodeCpusAndMaxLlcsPerNode) {
  absl::StatusOr<Topology> topo = Topology::Create(TwoNodeSpec());
  ASSERT_TRUE(topo.ok());
  EXPECT_EQ(topo->NodeCpus(1), CpuSet::FromRange(8, 15));
  EXPECT_TRUE(topo->NodeCpus(7).Empty());
  EXPECT_EQ(topo->NodeOf(9), 1);
  EXPECT_EQ(topo->MaxLlcsPerNode(), 2);
}

TEST(TopologyCreate, MaxLlcsPerNodeIsOneWhenLlcSpansNode) {
  TopologySpec spec = TwoNodeSpec();
  spec.llcs = {CacheSpec{3, 0, CpuSet::FromRange(0, 7)},
               CacheSpec{3, 0, CpuSet::FromRange(8, 15)}};
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  ASSERT_TRUE(topo.ok());
  EXPECT_EQ(topo->MaxLlcsPerNode(), 1);
}

TEST(TopologyCreate, EmptyOnlineMeansAllAndOnlineMustExist) {
  absl::StatusOr<Topology> all = Topology::Create(TwoNodeSpec());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->online_cpus(), CpuSet::FromRange(0, 15));

  TopologySpec spec = TwoNodeSpec();
  spec.online = CpuSet{0, 99};
  EXPECT_EQ(Topology::Create(std::move(spec)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TopologyCreate, SparseCpuNumbers) {
  // POWER-like: 2 cores of 2 threads numbered 0,1 and 8,9.
  TopologySpec spec;
  spec.source = "sparse";
  spec.cpus = {CpuSpec{8, 1, 0, 0}, CpuSpec{0, 0, 0, 0}, CpuSpec{9, 1, 0, 0},
               CpuSpec{1, 0, 0, 0}};
  absl::StatusOr<Topology> topo = Topology::Create(std::move(spec));
  ASSERT_TRUE(topo.ok());
  EXPECT_EQ(topo->max_cpu(), 9);
  EXPECT_FALSE(topo->HasCpu(5));
  EXPECT_EQ(topo->cpu(8).core, 1);
  EXPECT_EQ(topo->llcs().size(), 4u);  // all synthesized
}

}  // namespace
}  // namespace schedcache
