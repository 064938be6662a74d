// scx_summary: what schedcache-scx reports of its scheduler
// (schedcache_scx.bpf.c): the counters summed over CPUs, the latency from a
// preference's write to its first use, and the final JSON object
// (docs/INTEGRATION.md, "schedcache-scx"). Pure functions over plain
// values, so they are tested without a kernel.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_SCX_SCX_SUMMARY_H_
#define SCHEDCACHE_SCX_SCX_SUMMARY_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "scx/schedcache_scx.h"

namespace schedcache {

// ScxCounters: the scheduler's counters (enum schedcache_scx_counter).
struct ScxCounters {
  uint64_t placed_preferred = 0;
  uint64_t queued_preferred_busy = 0;  // fallback
  uint64_t no_preference = 0;          // fallback
  uint64_t pinned = 0;                 // fallback
  uint64_t narrow_affinity = 0;        // fallback
  uint64_t over_aggregated = 0;        // fallback
  uint64_t steals = 0;
  uint64_t latency_lost = 0;
};

// CountersFromArray names the values of the counters array, summed over
// CPUs, indexed by enum schedcache_scx_counter. REQUIRES: values.size() ==
// SCHEDCACHE_SCX_NR_COUNTERS.
ScxCounters CountersFromArray(absl::Span<const uint64_t> values);

// LatencySummary: the delays of first placements, in nanoseconds, with
// exact percentiles by nearest rank (the value at rank ceil(q * count) of
// the sorted delays); all 0 when count is 0.
struct LatencySummary {
  uint64_t count = 0;
  uint64_t p50 = 0;
  uint64_t p99 = 0;
};

// LatencyLog keeps one delay per (tgid, seq): the scheduler may send two
// first placements of one preference (two CPUs at once), and the earlier
// is the first.
class LatencyLog {
 public:
  void Add(const schedcache_scx_latency& record);
  LatencySummary Summarize() const;

 private:
  // (tgid, seq) -> the earliest placement's delay from updated_ns; a
  // placement stamped before the write (the entry changed while the
  // scheduler read it) counts as 0.
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint64_t> delays_;
};

// StatsLine is one line of --stats: every counter by name.
std::string StatsLine(const ScxCounters& counters);

// SummaryJson is the final summary: one JSON object, no newline.
std::string SummaryJson(const ScxCounters& counters,
                        const LatencySummary& latency);

}  // namespace schedcache

#endif  // SCHEDCACHE_SCX_SCX_SUMMARY_H_
