#include "client/trace/cpu_map.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(CpuMap, EmptyTextIsIdentity) {
  absl::StatusOr<CpuMap> map = CpuMap::Parse("");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_TRUE(map->identity());
  EXPECT_EQ(map->Map(7), 7);
}

TEST(CpuMap, MapsSinglesAndRangesAndLeavesOthersAlone) {
  absl::StatusOr<CpuMap> map = CpuMap::Parse("0=100,1:200, 4-6=10-12");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->Map(0), 100);
  EXPECT_EQ(map->Map(1), 200);
  EXPECT_EQ(map->Map(4), 10);
  EXPECT_EQ(map->Map(6), 12);
  EXPECT_EQ(map->Map(3), 3);
  EXPECT_EQ(map->Map(1000), 1000);
}

TEST(CpuMap, RejectsBadEntries) {
  EXPECT_FALSE(CpuMap::Parse("0-3:0-2").ok());  // lengths differ
  EXPECT_FALSE(CpuMap::Parse("1=2,1=3").ok());  // mapped twice
  EXPECT_FALSE(CpuMap::Parse("1").ok());        // no target
  EXPECT_FALSE(CpuMap::Parse("a=1").ok());
  EXPECT_FALSE(CpuMap::Parse("3-1=1-3").ok());  // reversed range
  EXPECT_FALSE(CpuMap::Parse("0=99999999").ok());
}

}  // namespace
}  // namespace schedcache
