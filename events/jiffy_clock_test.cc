#include "events/jiffy_clock.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(TickNs, IsOneSecondOverHzRoundedDown) {
  EXPECT_EQ(TickNs(100), 10 * kMs);
  EXPECT_EQ(TickNs(250), 4 * kMs);
  EXPECT_EQ(TickNs(300), 3'333'333);  // 3.333... ms
  EXPECT_EQ(TickNs(1000), kMs);
}

TEST(JiffyClock, WithoutAnchorJiffiesCountTicksFromZero) {
  const JiffyClock clock{.tick_ns = TickNs(250)};
  // Jiffy j covers [4j ms, 4(j+1) ms): the edge belongs to the new jiffy.
  EXPECT_EQ(clock.JiffyAt(0), 0);
  EXPECT_EQ(clock.JiffyAt(4 * kMs - 1), 0);
  EXPECT_EQ(clock.JiffyAt(4 * kMs), 1);
  EXPECT_EQ(clock.JiffyAt(4 * kMs + 1), 1);
  EXPECT_EQ(clock.JiffyAt(10 * kMs), 2);
}

TEST(JiffyClock, AnAnchorShiftsTheEdgesAndNumbers) {
  // jiffies became 4294892296 (INITIAL_JIFFIES at HZ 250) at 1.5 ms.
  const JiffyClock clock{.tick_ns = TickNs(250),
                         .anchor_ns = 1'500'000,
                         .anchor_jiffies = 4'294'892'296};
  EXPECT_EQ(clock.JiffyAt(1'500'000), 4'294'892'296);
  EXPECT_EQ(clock.JiffyAt(5'499'999), 4'294'892'296);  // 1.5 + 4 ms - 1 ns
  EXPECT_EQ(clock.JiffyAt(5'500'000), 4'294'892'297);
  // Before the anchor the floor goes toward minus infinity: 1 ns before it
  // is the previous jiffy, and so is 1.5 ms, which began at -2.5 ms.
  EXPECT_EQ(clock.JiffyAt(1'499'999), 4'294'892'295);
  EXPECT_EQ(clock.JiffyAt(0), 4'294'892'295);
}

TEST(JiffyClock, FirstTickAtOrAfterFindsTheNextJiffyStart) {
  const JiffyClock clock{.tick_ns = TickNs(1000), .anchor_ns = 300'000};
  EXPECT_EQ(clock.FirstTickAtOrAfter(0), 300'000);
  EXPECT_EQ(clock.FirstTickAtOrAfter(300'000), 300'000);
  EXPECT_EQ(clock.FirstTickAtOrAfter(300'001), 1'300'000);
  EXPECT_EQ(clock.FirstTickAtOrAfter(5 * kMs), 5'300'000);
  // Past the last representable start there is none.
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(clock.FirstTickAtOrAfter(max - 5), max);
}

}  // namespace
}  // namespace schedcache
