// Histograms behind EngineReport's distributions: an exact one for small
// bounded counts (CPUs and LLCs scanned) and a log-linear one, within 12.5%,
// for durations.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_POLICIES_STATS_H_
#define SCHEDCACHE_POLICIES_STATS_H_

#include <cstdint>
#include <vector>

#include "policies/decision.h"

namespace schedcache {

// ExactHistogram counts values 0..max_value exactly (larger ones clamp).
class ExactHistogram {
 public:
  explicit ExactHistogram(int max_value) : counts_(max_value + 1, 0) {}
  void Add(int64_t value);
  Distribution Summarize() const;

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

// LogHistogram keeps 8 buckets per power of two; percentiles report the
// lower bound of their bucket, mean and max are exact.
class LogHistogram {
 public:
  LogHistogram() : counts_(kBuckets, 0) {}
  void Add(int64_t value);
  Distribution Summarize() const;

 private:
  static constexpr int kSubBits = 3;
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;
  static int BucketOf(uint64_t value);
  static int64_t LowerBound(int bucket);

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
  int64_t max_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_STATS_H_
