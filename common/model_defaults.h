// Defaults of the model's time that every input and the engine share, so a
// trace, a workload, a recording and a session agree without being told
// (docs/MODEL.md, "Time in jiffies").
#ifndef SCHEDCACHE_COMMON_MODEL_DEFAULTS_H_
#define SCHEDCACHE_COMMON_MODEL_DEFAULTS_H_

#include <cstdint>

namespace schedcache {

// kDefaultHz is the tick rate (kernel CONFIG_HZ) wherever none is given:
// Debian's and most distributions' kernels are built with HZ 250.
inline constexpr int kDefaultHz = 250;

// kMaxClockJumpNs is the longest step forward in time one input may take:
// 3,600 s. No real trace goes an hour without a context switch, but one
// corrupted digit of the seconds does, and following it would tick every
// running thread through the whole gap. Trace replay counts a longer gap
// as malformed; it is the engine's default max_clock_jump_ns.
inline constexpr int64_t kMaxClockJumpNs = int64_t{3'600} * 1'000'000'000;

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_MODEL_DEFAULTS_H_
