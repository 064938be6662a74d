// DeterministicRandom: the workload generator's only source of randomness,
// reproducible for a seed on every platform and standard library. The
// engine is std::mt19937_64, whose output sequence the C++ standard fixes;
// the distributions are our own integer and exact-double arithmetic, since
// std:: distributions (and absl's engines) may differ between library
// versions. No floating-point function (log, exp) is used.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVAL_WORKLOAD_RANDOM_H_
#define SCHEDCACHE_EVAL_WORKLOAD_RANDOM_H_

#include <cstdint>
#include <random>

namespace schedcache {

// UniformRange is [lo, hi] prepared for DeterministicRandom::Uniform: the
// rejection limit costs a 64-bit division, paid once per range here rather
// than once per draw. REQUIRES: lo <= hi.
struct UniformRange {
  UniformRange(int64_t lo, int64_t hi)
      : lo(lo),
        range(static_cast<uint64_t>(hi - lo) + 1),
        limit(range == 0 ? 0 : UINT64_MAX - UINT64_MAX % range) {}
  int64_t lo;
  uint64_t range;  // hi - lo + 1; 0: all 2^64 values
  uint64_t limit;  // draws at or above it are rejected (no modulo bias)
};

class DeterministicRandom {
 public:
  explicit DeterministicRandom(uint64_t seed) : engine_(seed) {}

  // Uniform returns an integer in the range, each equally likely
  // (rejection sampling, no modulo bias).
  int64_t Uniform(const UniformRange& r) {
    if (r.range == 0) return static_cast<int64_t>(engine_());  // full 64 bits
    uint64_t x;
    do {
      x = engine_();
    } while (x >= r.limit);
    return r.lo + static_cast<int64_t>(x % r.range);
  }

  // UniformInt is Uniform(UniformRange(lo, hi)), for a range drawn from once.
  int64_t UniformInt(int64_t lo, int64_t hi) {
    return Uniform(UniformRange(lo, hi));
  }

  // UniformUnit returns a double in [0, 1) with 53 random bits (exact).
  double UniformUnit() {
    return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
  }

  // Bernoulli returns true with probability p (p <= 0: never; p >= 1:
  // always, and no draw is consumed at either end, so a zero probability
  // leaves the stream of other draws unchanged).
  bool Bernoulli(double p) {
    if (p <= 0.0) return false;
    if (p >= 1.0) return true;
    return UniformUnit() < p;
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_WORKLOAD_RANDOM_H_
