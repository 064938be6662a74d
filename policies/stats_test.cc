#include "policies/stats.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(ExactHistogram, PercentilesAreExact) {
  ExactHistogram h(400);
  for (int v = 1; v <= 100; ++v) h.Add(v);
  const Distribution d = h.Summarize();
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_EQ(d.p50, 50);  // rank ceil(0.5*100) = 50
  EXPECT_EQ(d.p99, 99);  // rank ceil(0.99*100) = 99
  EXPECT_EQ(d.max, 100);
}

TEST(ExactHistogram, AddWithACountIsThatManyObservations) {
  // 99 scans of 4 CPUs and 1 of 16: mean (396 + 16) / 100 = 4.12; p99 is
  // rank 99, still 4; max 16.
  ExactHistogram h(16);
  h.Add(4, 99);
  h.Add(16, 1);
  const Distribution d = h.Summarize();
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.mean, 4.12);
  EXPECT_EQ(d.p50, 4);
  EXPECT_EQ(d.p99, 4);
  EXPECT_EQ(d.max, 16);
}

TEST(ExactHistogram, EmptyIsAllZero) {
  const Distribution d = ExactHistogram(8).Summarize();
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.max, 0);
}

TEST(LogHistogram, PercentilesAreWithinAnEighth) {
  LogHistogram h;
  for (int64_t v = 1000; v <= 100000; v += 1000) h.Add(v);
  const Distribution d = h.Summarize();
  EXPECT_EQ(d.max, 100000);
  EXPECT_LE(d.p50, 50000);
  EXPECT_GE(d.p50, 50000 * 7 / 8);
  EXPECT_LE(d.p99, 99000);
  EXPECT_GE(d.p99, 99000 * 7 / 8);
}

TEST(ExactHistogram, CountAtMostIsCumulative) {
  ExactHistogram h(8);
  for (int v : {0, 2, 2, 5, 8}) h.Add(v);
  EXPECT_EQ(h.CountAtMost(-1), 0u);
  EXPECT_EQ(h.CountAtMost(0), 1u);   // {0}
  EXPECT_EQ(h.CountAtMost(1), 1u);
  EXPECT_EQ(h.CountAtMost(2), 3u);   // {0, 2, 2}
  EXPECT_EQ(h.CountAtMost(7), 4u);   // and 5
  EXPECT_EQ(h.CountAtMost(64), 5u);  // past the last value: all
  EXPECT_EQ(h.count(), 5u);
  EXPECT_DOUBLE_EQ(h.sum(), 17.0);   // 0 + 2 + 2 + 5 + 8
}

TEST(LogHistogram, CountBelowIsExactAtPowersOfTwo) {
  LogHistogram h;
  // 1023 and 1024 straddle the power of two 1024; 1100 shares 1024's
  // bucket [1024, 1152) (8 buckets per power of two: width 128 there).
  for (int64_t v : {5, 1023, 1024, 1100, 4096}) h.Add(v);
  EXPECT_EQ(h.CountBelow(0), 0u);
  EXPECT_EQ(h.CountBelow(8), 1u);     // {5}
  EXPECT_EQ(h.CountBelow(1024), 2u);  // {5, 1023}
  EXPECT_EQ(h.CountBelow(2048), 4u);  // and 1024, 1100
  EXPECT_EQ(h.CountBelow(4096), 4u);  // 4096 itself is not below
  EXPECT_EQ(h.CountBelow(8192), 5u);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_DOUBLE_EQ(h.sum(), 7248.0);  // 5 + 1023 + 1024 + 1100 + 4096
}

}  // namespace
}  // namespace schedcache
