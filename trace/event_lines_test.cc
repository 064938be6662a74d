#include "trace/event_lines.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(EventLines, NamesTheLineOfEachEventAcrossGapsAndRepeats) {
  EventLines lines;
  // A CSV: header on line 1, rows on 2 and 3, a comment on 4, rows on 5
  // and 6; then a trace-like line 9 that gave two events.
  for (int64_t line : {2, 3, 5, 6, 9, 9}) lines.Add(line);
  EXPECT_EQ(lines.size(), 6u);
  const int64_t want[] = {2, 3, 5, 6, 9, 9};
  for (uint64_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(lines.LineOf(i).has_value()) << i;
    EXPECT_EQ(*lines.LineOf(i), want[i]) << i;
  }
  EXPECT_FALSE(lines.LineOf(6).has_value());
}

TEST(EventLines, AGaplessFileIsOneRunHoweverLong) {
  EventLines lines;
  for (int64_t line = 2; line < 2'000'002; ++line) lines.Add(line);
  EXPECT_EQ(*lines.LineOf(0), 2);
  EXPECT_EQ(*lines.LineOf(1'999'999), 2'000'001);
}

TEST(EventLines, EventsPastTheRunCapHaveNoLine) {
  EventLines lines;
  // Every event on the same line: each after the first opens a run.
  for (size_t i = 0; i < EventLines::kMaxRuns + 10; ++i) lines.Add(7);
  EXPECT_EQ(*lines.LineOf(EventLines::kMaxRuns - 1), 7);
  EXPECT_FALSE(lines.LineOf(EventLines::kMaxRuns).has_value());
  EXPECT_EQ(lines.size(), EventLines::kMaxRuns + 10);
}

}  // namespace
}  // namespace schedcache
