// Histograms behind EngineReport's distributions: an exact one for small
// bounded counts (CPUs and LLCs scanned) and a log-linear one, within 12.5%,
// for durations; and PolicyStats, one policy's share of EngineReport.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_POLICIES_STATS_H_
#define SCHEDCACHE_POLICIES_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "policies/decision.h"
#include "policies/model_context.h"

namespace schedcache {

// ExactHistogram counts values 0..max_value exactly (larger ones clamp).
class ExactHistogram {
 public:
  explicit ExactHistogram(int max_value) : counts_(max_value + 1, 0) {}
  // Add counts `times` observations of `value` (ab-merge adds whole bins).
  void Add(int64_t value, uint64_t times = 1);
  Distribution Summarize() const;
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // CountAtMost is how many values were <= `value` (exact; the cumulative
  // count of a Prometheus bucket).
  uint64_t CountAtMost(int64_t value) const;

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
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // CountBelow is how many values were < `bound`: exact when `bound` is a
  // bucket's lower bound, which every power of two is; otherwise the
  // bucket holding `bound` is left out.
  uint64_t CountBelow(int64_t bound) const;

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

// PolicyStats is what a session counts for one policy: its scans and their
// cost, its agreement with the reference policy and with the running
// kernel, and the runtime accounted while the process was on its preferred
// LLC.
struct PolicyStats {
  PolicyStats(int max_cpus, int max_llcs)
      : cpus_scanned(max_cpus), llcs_scanned(max_llcs) {}

  // RecordScan counts what one scan trigger did.
  void RecordScan(const ScanOutcome& outcome);
  // Summarize is the policy's PolicyReport.
  PolicyReport Summarize(std::string name) const;

  uint64_t scans = 0;
  uint64_t scans_skipped = 0;
  uint64_t scans_skipped_disabled = 0;
  uint64_t scans_aborted = 0;
  ExactHistogram cpus_scanned;
  ExactHistogram llcs_scanned;
  LogHistogram scan_ns;
  uint64_t decisions = 0;
  uint64_t agreements = 0;
  uint64_t preferred_llc_changes = 0;
  uint64_t runtime_total = 0;
  uint64_t runtime_on_preferred_llc = 0;
  // As PolicyReport's fields of the same names.
  uint64_t kernel_decisions = 0;
  uint64_t kernel_scans = 0;
  uint64_t kernel_agreements = 0;
  uint64_t kernel_process_scans = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_STATS_H_
