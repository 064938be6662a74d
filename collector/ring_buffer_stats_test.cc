#include "collector/ring_buffer_stats.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::host {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The layout of per_cpu/cpuN/stats on Linux 6.18, with made-up counts.
constexpr char kStats[] =
    "entries: 12\n"
    "overrun: 345\n"
    "commit overrun: 6\n"
    "bytes: 4080\n"
    "oldest event ts:  1234.567890\n"
    "now ts: 11966.617478\n"
    "dropped events: 78\n"
    "read events: 9\n";

TEST(ParseRingBufferStats, ReadsTheThreeLossCounters) {
  const absl::StatusOr<RingBufferStats> stats =
      ParseRingBufferStats(kStats, "cpu0/stats");
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->overrun, 345u);
  EXPECT_EQ(stats->commit_overrun, 6u);
  EXPECT_EQ(stats->dropped_events, 78u);
  // 345 + 6 + 78.
  EXPECT_EQ(stats->lost(), 429u);
}

TEST(ParseRingBufferStats, AddsUpAcrossCpus) {
  RingBufferStats total{.overrun = 1, .commit_overrun = 2, .dropped_events = 3};
  total += RingBufferStats{
      .overrun = 10, .commit_overrun = 20, .dropped_events = 30};
  EXPECT_EQ(total,
            (RingBufferStats{
                .overrun = 11, .commit_overrun = 22, .dropped_events = 33}));
}

TEST(ParseRingBufferStats, RejectsANonNumberNamingFileLineAndValue) {
  const absl::StatusOr<RingBufferStats> stats = ParseRingBufferStats(
      "entries: 0\noverrun: lots\ncommit overrun: 0\ndropped events: 0\n",
      "cpu3/stats");
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stats.status().message(),
              AllOf(HasSubstr("cpu3/stats:2"), HasSubstr("overrun"),
                    HasSubstr("\"lots\"")));
}

TEST(ParseRingBufferStats, RejectsANegativeCount) {
  const absl::StatusOr<RingBufferStats> stats = ParseRingBufferStats(
      "overrun: 0\ncommit overrun: 0\ndropped events: -1\n", "s");
  EXPECT_THAT(stats.status().message(),
              AllOf(HasSubstr("s:3"), HasSubstr("\"-1\"")));
}

TEST(ParseRingBufferStats, RejectsALineWithoutColon) {
  const absl::StatusOr<RingBufferStats> stats =
      ParseRingBufferStats("overrun 0\n", "s");
  EXPECT_THAT(stats.status().message(),
              AllOf(HasSubstr("s:1"), HasSubstr("\"overrun 0\"")));
}

TEST(ParseRingBufferStats, RejectsAMissingCounterRatherThanReadingZero) {
  const absl::StatusOr<RingBufferStats> stats =
      ParseRingBufferStats("overrun: 0\ncommit overrun: 0\n", "cpu1/stats");
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(stats.status().message(),
              AllOf(HasSubstr("cpu1/stats"), HasSubstr("dropped events")));
}

}  // namespace
}  // namespace schedcache::host
