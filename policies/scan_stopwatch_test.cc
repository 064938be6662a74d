// ScanStopwatch must agree with the monotonic clock, whichever counter it
// reads (the TSC, calibrated, on x86 with an invariant TSC). The bounds come
// from monotonic-clock readings taken around it, never from fixed timings,
// so a busy machine cannot make the test flake.
#include "policies/scan_stopwatch.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

using std::chrono::nanoseconds;
using std::chrono::steady_clock;

TEST(ScanStopwatch, AgreesWithTheMonotonicClockOverASleep) {
  constexpr auto kSleep = std::chrono::milliseconds(20);
  for (int round = 0; round < 3; ++round) {
    const auto outer_start = steady_clock::now();
    const ScanStopwatch stopwatch;
    const auto inner_start = steady_clock::now();
    std::this_thread::sleep_for(kSleep);
    const auto inner_end = steady_clock::now();
    const int64_t elapsed = stopwatch.ElapsedNs();
    const auto outer_end = steady_clock::now();
    // The stopwatch's interval contains [inner_start, inner_end] and lies in
    // [outer_start, outer_end]; 0.1% allows the TSC rate's calibration
    // error (at most 0.01%, see CalibrateTsc).
    const double inner =
        std::chrono::duration_cast<nanoseconds>(inner_end - inner_start)
            .count();
    const double outer =
        std::chrono::duration_cast<nanoseconds>(outer_end - outer_start)
            .count();
    EXPECT_GE(static_cast<double>(elapsed), inner * 0.999) << "round " << round;
    EXPECT_LE(static_cast<double>(elapsed), outer * 1.001) << "round " << round;
  }
}

TEST(ScanStopwatch, NeverNegative) {
  const ScanStopwatch stopwatch;
  EXPECT_GE(stopwatch.ElapsedNs(), 0);
}

}  // namespace
}  // namespace schedcache
