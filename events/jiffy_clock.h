// JiffyClock: the kernel's tick counter (`jiffies`) as a function of a
// nanosecond timestamp (docs/MODEL.md, "Time in jiffies"). Jiffy j begins
// at anchor_ns + (j - anchor_jiffies) * tick_ns, so the jiffy of time t is
// anchor_jiffies + floor((t - anchor_ns) / tick_ns), rounded toward minus
// infinity for t before the anchor. A capture's KernelClock header gives
// the anchor; without one it is jiffy 0 at t = 0. The replay's ticks
// (events/sched_state_machine.h) fall on the same grid, at the start of
// every jiffy.
//
// Thread contract: an immutable value.
#ifndef SCHEDCACHE_EVENTS_JIFFY_CLOCK_H_
#define SCHEDCACHE_EVENTS_JIFFY_CLOCK_H_

#include <cstdint>
#include <limits>

#include "common/model_defaults.h"

namespace schedcache {

// TickNs is the length of one jiffy at `hz`, 1e9 / hz ns rounded down (4
// ms at HZ 250, 3,333,333 ns at HZ 300). REQUIRES: 1 <= hz <= 1e9.
constexpr int64_t TickNs(int64_t hz) { return 1'000'000'000 / hz; }

// FloorDiv is a / b rounded toward minus infinity. REQUIRES: b > 0.
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return a % b < 0 ? q - 1 : q;
}

struct JiffyClock {
  int64_t tick_ns = TickNs(kDefaultHz);
  int64_t anchor_ns = 0;       // jiffies became anchor_jiffies at this time
  int64_t anchor_jiffies = 0;

  // JiffyAt is the jiffy in progress at `t`. REQUIRES: t and anchor_ns in
  // [0, 2^62], tick_ns >= 1000, anchor_jiffies in [0, 2^62] (the model's
  // ranges), so nothing overflows.
  constexpr int64_t JiffyAt(int64_t t) const {
    return anchor_jiffies + FloorDiv(t - anchor_ns, tick_ns);
  }

  // FirstTickAtOrAfter is the start of the first jiffy that begins at or
  // after `t`, or INT64_MAX when that time is not representable.
  // REQUIRES: t >= 0, anchor_ns in [0, 2^62], tick_ns >= 1.
  constexpr int64_t FirstTickAtOrAfter(int64_t t) const {
    const int64_t offset = t - anchor_ns;  // >= -2^62: no overflow
    const int64_t below = anchor_ns + FloorDiv(offset, tick_ns) * tick_ns;
    if (below == t) return t;
    return below > std::numeric_limits<int64_t>::max() - tick_ns
               ? std::numeric_limits<int64_t>::max()
               : below + tick_ns;
  }
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_JIFFY_CLOCK_H_
