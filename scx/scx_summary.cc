#include "scx/scx_summary.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

// NearestRank returns the value at rank ceil(q_percent / 100 * n) (1-based)
// of `sorted`. REQUIRES: sorted is not empty.
uint64_t NearestRank(const std::vector<uint64_t>& sorted, uint64_t q_percent) {
  const uint64_t n = sorted.size();
  const uint64_t rank = std::max<uint64_t>(1, (q_percent * n + 99) / 100);
  return sorted[rank - 1];
}

}  // namespace

ScxCounters CountersFromArray(absl::Span<const uint64_t> values) {
  return ScxCounters{
      .placed_preferred = values[SCHEDCACHE_SCX_PLACED_PREFERRED],
      .queued_preferred_busy = values[SCHEDCACHE_SCX_QUEUED_PREFERRED_BUSY],
      .no_preference = values[SCHEDCACHE_SCX_NO_PREFERENCE],
      .pinned = values[SCHEDCACHE_SCX_PINNED],
      .narrow_affinity = values[SCHEDCACHE_SCX_NARROW_AFFINITY],
      .over_aggregated = values[SCHEDCACHE_SCX_OVER_AGGREGATED],
      .steals = values[SCHEDCACHE_SCX_STEALS],
      .latency_lost = values[SCHEDCACHE_SCX_LATENCY_LOST],
  };
}

void LatencyLog::Add(const schedcache_scx_latency& record) {
  const uint64_t delay = record.placed_ns > record.updated_ns
                             ? record.placed_ns - record.updated_ns
                             : 0;
  const auto [it, inserted] =
      delays_.try_emplace(std::make_pair(record.tgid, record.seq), delay);
  if (!inserted) it->second = std::min(it->second, delay);
}

LatencySummary LatencyLog::Summarize() const {
  if (delays_.empty()) return LatencySummary{};
  std::vector<uint64_t> sorted;
  sorted.reserve(delays_.size());
  for (const auto& [key, delay] : delays_) sorted.push_back(delay);
  std::sort(sorted.begin(), sorted.end());
  return LatencySummary{.count = sorted.size(),
                        .p50 = NearestRank(sorted, 50),
                        .p99 = NearestRank(sorted, 99)};
}

std::string StatsLine(const ScxCounters& c) {
  return absl::StrCat("placed_preferred ", c.placed_preferred,
                      ", preferred_llc_busy ", c.queued_preferred_busy,
                      ", no_preference ", c.no_preference, ", pinned ",
                      c.pinned, ", narrow_affinity ", c.narrow_affinity,
                      ", over_aggregated ", c.over_aggregated, ", steals ", c.steals, ", latency_lost ",
                      c.latency_lost);
}

std::string SummaryJson(const ScxCounters& c, const LatencySummary& latency) {
  return absl::StrCat(
      "{\"placed_preferred\":", c.placed_preferred,
      ",\"fallbacks\":{\"preferred_llc_busy\":", c.queued_preferred_busy,
      ",\"no_preference\":", c.no_preference, ",\"pinned\":", c.pinned,
      ",\"narrow_affinity\":", c.narrow_affinity,
      ",\"over_aggregated\":", c.over_aggregated, "},\"steals\":", c.steals,
      ",\"pref_latency_ns\":{\"count\":", latency.count, ",\"p50\":", latency.p50, ",\"p99\":", latency.p99,
      ",\"lost\":", c.latency_lost, "}}");
}

}  // namespace schedcache
