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

class DeterministicRandom {
 public:
  explicit DeterministicRandom(uint64_t seed) : engine_(seed) {}

  // UniformInt returns an integer in [lo, hi], each equally likely
  // (rejection sampling, no modulo bias). REQUIRES: lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<int64_t>(engine_());  // full 64 bits
    const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do {
      x = engine_();
    } while (x >= limit);
    return lo + static_cast<int64_t>(x % range);
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
