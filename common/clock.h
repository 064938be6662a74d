// Clock: the one way code reads the time of day for a decision (is a
// deadline past, how long has a capture run). Code that takes a Clock can
// be tested with FakeClock (common/fake_clock.h), which moves only when the
// test says so, instead of sleeping until real time has passed.
//
// Reads that stay on the real clock, on purpose: deadlines handed to gRPC
// or to poll(2) as real waits, clocks that must match the kernel's
// timestamps (CLOCK_MONOTONIC), and stopwatches that measure a cost.
//
// Thread contract: every Clock is safe to read from any thread.
#ifndef SCHEDCACHE_COMMON_CLOCK_H_
#define SCHEDCACHE_COMMON_CLOCK_H_

#include <memory>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace schedcache {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;

  // Real is the system's clock (absl::Now), the default everywhere. Clocks
  // are held shared, as threads that outlive their owner may read them.
  static std::shared_ptr<const Clock> Real();
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

inline std::shared_ptr<const Clock> Clock::Real() {
  static const std::shared_ptr<const Clock> real =
      std::make_shared<const RealClock>();
  return real;
}

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_CLOCK_H_
