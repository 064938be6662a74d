#include "policies/stats.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace schedcache {
namespace {

// RankOf is the 1-based rank of quantile q among `count` observations.
uint64_t RankOf(uint64_t count, double q) {
  const auto rank = static_cast<uint64_t>(q * static_cast<double>(count) + 0.999999);
  return std::clamp<uint64_t>(rank, 1, count);
}

// Percentile walks `counts` to the bucket holding rank `rank`.
template <typename ValueOf>
int64_t Percentile(const std::vector<uint64_t>& counts, uint64_t rank,
                   ValueOf value_of) {
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return value_of(static_cast<int>(i));
  }
  return 0;
}

}  // namespace

void ExactHistogram::Add(int64_t value, uint64_t times) {
  const int64_t last = static_cast<int64_t>(counts_.size()) - 1;
  counts_[std::clamp<int64_t>(value, 0, last)] += times;
  count_ += times;
  sum_ += static_cast<double>(value) * static_cast<double>(times);
}

Distribution ExactHistogram::Summarize() const {
  Distribution d;
  d.count = count_;
  if (count_ == 0) return d;
  d.mean = sum_ / static_cast<double>(count_);
  auto identity = [](int i) { return static_cast<int64_t>(i); };
  d.p50 = Percentile(counts_, RankOf(count_, 0.5), identity);
  d.p99 = Percentile(counts_, RankOf(count_, 0.99), identity);
  d.max = Percentile(counts_, count_, identity);
  return d;
}

uint64_t ExactHistogram::CountAtMost(int64_t value) const {
  if (value < 0) return 0;
  const auto last = static_cast<int64_t>(counts_.size()) - 1;
  uint64_t count = 0;
  for (int64_t i = 0; i <= std::min(value, last); ++i) count += counts_[i];
  return count;
}

int LogHistogram::BucketOf(uint64_t value) {
  if (value < (1u << kSubBits)) return static_cast<int>(value);
  const int msb = std::bit_width(value) - 1;  // >= kSubBits
  const int shift = msb - kSubBits;
  const int sub = static_cast<int>((value >> shift) & ((1u << kSubBits) - 1));
  return ((shift + 1) << kSubBits) + sub;
}

int64_t LogHistogram::LowerBound(int bucket) {
  if (bucket < (1 << kSubBits)) return bucket;
  const int shift = (bucket >> kSubBits) - 1;
  const int sub = bucket & ((1 << kSubBits) - 1);
  return static_cast<int64_t>((uint64_t{1} << kSubBits) + sub) << shift;
}

void LogHistogram::Add(int64_t value) {
  value = std::max<int64_t>(value, 0);
  ++counts_[BucketOf(static_cast<uint64_t>(value))];
  ++count_;
  sum_ += static_cast<double>(value);
  max_ = std::max(max_, value);
}

uint64_t LogHistogram::CountBelow(int64_t bound) const {
  if (bound <= 0) return 0;
  // Buckets below the one holding `bound` hold only smaller values.
  const int first_excluded = BucketOf(static_cast<uint64_t>(bound));
  uint64_t count = 0;
  for (int i = 0; i < first_excluded; ++i) count += counts_[i];
  return count;
}

Distribution LogHistogram::Summarize() const {
  Distribution d;
  d.count = count_;
  if (count_ == 0) return d;
  d.mean = sum_ / static_cast<double>(count_);
  d.p50 = std::min(max_, Percentile(counts_, RankOf(count_, 0.5), LowerBound));
  d.p99 = std::min(max_, Percentile(counts_, RankOf(count_, 0.99), LowerBound));
  d.max = max_;
  return d;
}

void PolicyStats::RecordScan(const ScanOutcome& outcome) {
  switch (outcome.kind) {
    case ScanOutcome::Kind::kNoScan:
      break;
    case ScanOutcome::Kind::kSkipped:
      ++scans_skipped;
      break;
    case ScanOutcome::Kind::kSkippedDisabled:
      ++scans_skipped;
      ++scans_skipped_disabled;
      break;
    case ScanOutcome::Kind::kAborted:
      ++scans_aborted;
      break;
    case ScanOutcome::Kind::kExecuted:
      ++scans;
      cpus_scanned.Add(outcome.cost.cpus_scanned);
      llcs_scanned.Add(outcome.cost.llcs_scanned);
      scan_ns.Add(outcome.cost.scan_ns);
      break;
  }
}

PolicyReport PolicyStats::Summarize(std::string name) const {
  PolicyReport r;
  r.name = std::move(name);
  r.scans = scans;
  r.scans_skipped = scans_skipped;
  r.scans_skipped_disabled = scans_skipped_disabled;
  r.scans_aborted = scans_aborted;
  r.cpus_scanned = cpus_scanned.Summarize();
  r.llcs_scanned = llcs_scanned.Summarize();
  r.scan_ns = scan_ns.Summarize();
  r.decisions = decisions;
  r.agreements = agreements;
  if (decisions > 0) {
    r.agreement =
        static_cast<double>(agreements) / static_cast<double>(decisions);
  }
  r.preferred_llc_changes = preferred_llc_changes;
  r.kernel_decisions = kernel_decisions;
  r.kernel_scans = kernel_scans;
  r.kernel_agreements = kernel_agreements;
  if (kernel_scans > 0) {
    r.kernel_agreement = static_cast<double>(kernel_agreements) /
                         static_cast<double>(kernel_scans);
  }
  r.kernel_process_scans = kernel_process_scans;
  r.runtime_on_preferred_llc =
      runtime_total == 0 ? 0.0
                         : static_cast<double>(runtime_on_preferred_llc) /
                               static_cast<double>(runtime_total);
  return r;
}

}  // namespace schedcache
