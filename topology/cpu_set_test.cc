#include "topology/cpu_set.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(CpuSet, EmptyByDefault) {
  CpuSet set;
  EXPECT_TRUE(set.Empty());
  EXPECT_EQ(set.Count(), 0);
  EXPECT_EQ(set.First(), -1);
  EXPECT_EQ(set.Last(), -1);
  EXPECT_EQ(set.ToString(), "");
}

TEST(CpuSet, ToStringUsesRanges) {
  CpuSet set = CpuSet::FromRange(0, 7) | CpuSet::FromRange(192, 199);
  EXPECT_EQ(set.ToString(), "0-7,192-199");
  EXPECT_EQ(set.Count(), 16);
  EXPECT_EQ(set.First(), 0);
  EXPECT_EQ(set.Last(), 199);
}

TEST(CpuSet, SparseSetLikePower8) {
  CpuSet set{0, 1, 8, 9, 104, 105};
  EXPECT_EQ(set.ToString(), "0-1,8-9,104-105");
  EXPECT_EQ(set.ToVector(), (std::vector<int>{0, 1, 8, 9, 104, 105}));
  EXPECT_FALSE(set.Test(2));
  EXPECT_TRUE(set.Test(104));
  EXPECT_FALSE(set.Test(-1));
  EXPECT_FALSE(set.Test(100000));
}

TEST(CpuSet, OperationsOverMoreThan1024Cpus) {
  CpuSet a = CpuSet::FromRange(1000, 2047);
  CpuSet b = CpuSet::FromRange(2000, 4095);
  EXPECT_EQ((a & b).ToString(), "2000-2047");
  EXPECT_EQ((a | b).ToString(), "1000-4095");
  EXPECT_EQ((a - b).ToString(), "1000-1999");
  EXPECT_EQ((b - a).ToString(), "2048-4095");
  EXPECT_EQ((a | b).Count(), 3096);
  EXPECT_TRUE(a.Intersects(b));
  EXPECT_TRUE((a & b).IsSubsetOf(a));
  EXPECT_FALSE(a.IsSubsetOf(b));
}

TEST(CpuSet, EqualityIgnoresTrailingStorage) {
  CpuSet a{3, 4000};
  a.Clear(4000);
  EXPECT_EQ(a, CpuSet{3});
  CpuSet b = CpuSet::FromRange(0, 3000) & CpuSet{5};
  EXPECT_EQ(b, CpuSet{5});
  EXPECT_EQ(b.Last(), 5);
}

TEST(CpuSet, AssignIntersectionReplacesContentsAndTrims) {
  CpuSet target = CpuSet::FromRange(0, 4095);  // old contents must go
  target.AssignIntersection(CpuSet{1, 64, 130, 3000}, CpuSet{64, 130, 131});
  EXPECT_EQ(target, (CpuSet{64, 130}));
  EXPECT_EQ(target.Last(), 130);
  target.AssignIntersection(CpuSet{1, 3000}, CpuSet{2, 3000});
  EXPECT_EQ(target, CpuSet{3000});
  // Disjoint operands leave the empty set, equal to a default one.
  target.AssignIntersection(CpuSet{1}, CpuSet::FromRange(2, 2000));
  EXPECT_TRUE(target.Empty());
  EXPECT_EQ(target, CpuSet());
  EXPECT_EQ(target.First(), -1);
}

TEST(CpuSet, ForEachAndVisitsIntersectionInOrder) {
  CpuSet a{1, 64, 65, 130, 1500};
  CpuSet b{0, 64, 130, 131, 1500, 2000};
  std::vector<int> seen;
  a.ForEachAnd(b, [&](int cpu) { seen.push_back(cpu); });
  EXPECT_EQ(seen, (std::vector<int>{64, 130, 1500}));
}

TEST(CpuSet, ParseRoundTrips) {
  auto set = CpuSet::Parse("0-7, 192-199,300");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->ToString(), "0-7,192-199,300");
  EXPECT_TRUE(CpuSet::Parse("")->Empty());
}

TEST(CpuSet, ParseRejectsMalformedText) {
  for (const char* bad : {"a", "1-", "-3", "5-2", "1,,2", "1-2-3", "-1"}) {
    auto set = CpuSet::Parse(bad);
    EXPECT_FALSE(set.ok()) << bad;
    EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(set.status().message().find(bad), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace schedcache
