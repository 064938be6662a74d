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

}  // namespace
}  // namespace schedcache
