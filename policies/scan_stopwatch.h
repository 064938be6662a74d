// ScanStopwatch times one scan for ScanCost::scan_ns. A scan of a process
// that ran on 16 CPUs takes about 100 ns, so the clock's own cost matters:
// a CLOCK_MONOTONIC read through the vDSO costs 25-45 ns on a KVM guest,
// twice per scan, while reading the x86 time-stamp counter costs about 8-17
// ns. Where the TSC is invariant (CPUID 0x80000007 EDX bit 8: constant
// rate, running in every C-state; the clock the kernel's own sched_clock()
// reads), the stopwatch reads it and converts ticks to ns with a rate
// calibrated once against the monotonic clock; elsewhere it reads the
// monotonic clock. Header-only, so plugins built apart get the same clock.
//
// Thread contract: thread-safe (the calibration is a function-local static).
#ifndef SCHEDCACHE_POLICIES_SCAN_STOPWATCH_H_
#define SCHEDCACHE_POLICIES_SCAN_STOPWATCH_H_

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace schedcache {
namespace scan_stopwatch_internal {

// TickSource says which counter the stopwatch reads and its rate.
struct TickSource {
  bool tsc = false;          // false: steady_clock ns
  double ns_per_tick = 1.0;  // 1 for steady_clock
};

inline int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

#if defined(__x86_64__)
inline bool InvariantTsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx >> 8) & 1;
}

// ClockPair is one reading of the monotonic clock and the TSC at the same
// moment: the clock read between two TSC reads, the narrowest of 16 tries.
// A preemption between reading one clock and the other (milliseconds on a
// loaded VM) would otherwise skew the rate by far more than the window.
struct ClockPair {
  int64_t ns;
  double ticks;
};

inline ClockPair ReadClockPair() {
  ClockPair best{0, 0};
  uint64_t narrowest = UINT64_MAX;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const uint64_t before = __rdtsc();
    const int64_t ns = SteadyNs();
    const uint64_t after = __rdtsc();
    if (after >= before && after - before < narrowest) {
      narrowest = after - before;
      best = {ns, static_cast<double>(before) +
                      static_cast<double>(after - before) / 2};
    }
  }
  return best;
}

// CalibrateTsc counts TSC ticks over 2 ms of the monotonic clock: the rate's
// error is the width of the two readings' brackets (tens of ns) over 2 ms,
// < 0.01%.
inline TickSource CalibrateTsc() {
  constexpr int64_t kWindowNs = 2'000'000;
  const ClockPair start = ReadClockPair();
  while (SteadyNs() - start.ns < kWindowNs) {
  }
  const ClockPair end = ReadClockPair();
  if (end.ticks <= start.ticks || end.ns <= start.ns) return {};
  return {true, static_cast<double>(end.ns - start.ns) /
                    (end.ticks - start.ticks)};
}
#endif

inline const TickSource& Source() {
#if defined(__x86_64__)
  static const TickSource source = InvariantTsc() ? CalibrateTsc()
                                                  : TickSource{};
#else
  static const TickSource source;
#endif
  return source;
}

inline uint64_t Ticks(const TickSource& source) {
#if defined(__x86_64__)
  if (source.tsc) return __rdtsc();
#endif
  return static_cast<uint64_t>(SteadyNs());
}

}  // namespace scan_stopwatch_internal

class ScanStopwatch {
 public:
  ScanStopwatch()
      : source_(scan_stopwatch_internal::Source()),
        start_(scan_stopwatch_internal::Ticks(source_)) {}

  // ElapsedNs is the time since construction, in ns; 0 if the counter
  // went backwards (a thread moved to a CPU whose TSC lags).
  int64_t ElapsedNs() const {
    const uint64_t now = scan_stopwatch_internal::Ticks(source_);
    if (now <= start_) return 0;
    return static_cast<int64_t>(static_cast<double>(now - start_) *
                                source_.ns_per_tick);
  }

 private:
  const scan_stopwatch_internal::TickSource& source_;
  const uint64_t start_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_SCAN_STOPWATCH_H_
