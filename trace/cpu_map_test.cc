#include "trace/cpu_map.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

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

TEST(CpuMap, RejectsTwoTraceCpusOntoOneTargetNamingBoth) {
  absl::StatusOr<CpuMap> map = CpuMap::Parse("0=0,1=0");
  ASSERT_FALSE(map.ok());
  EXPECT_EQ(map.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(map.status().message(), HasSubstr("trace cpus 0 and 1"));
  // Overlapping ranges collide too: 2 -> 11 and 3 -> 11.
  EXPECT_FALSE(CpuMap::Parse("0-2=9-11,3=11").ok());
  // A permutation is fine.
  EXPECT_TRUE(CpuMap::Parse("0=1,1=0").ok());
}

TEST(CpuMap, SyntaxErrorNamesBothSeparators) {
  absl::StatusOr<CpuMap> map = CpuMap::Parse("garbage");
  ASSERT_FALSE(map.ok());
  EXPECT_THAT(map.status().message(), HasSubstr("FROM=TO (or FROM:TO)"));
}

}  // namespace
}  // namespace schedcache
