// What an A/B evaluation streams to the --scan-trace and --perfetto writers
// as it runs (each executed scan, each change of a preferred LLC), never
// stored as a whole; and the two conventions the finished report
// (schedcache.v1.AbReport) shares with them: -1 for "no LLC", and how many
// of the busiest processes get a time series.
//
// Thread contract: plain structs; thread-compatible.
#ifndef SCHEDCACHE_EVAL_REPORT_SCAN_EVENT_H_
#define SCHEDCACHE_EVAL_REPORT_SCAN_EVENT_H_

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "policies/decision.h"

namespace schedcache {

// kNoPreferredLlc stands for "the policy holds no preferred LLC".
inline constexpr int kNoPreferredLlc = -1;

// kMaxTimelines is how many of the busiest processes get a time series.
inline constexpr int kMaxTimelines = 6;

// LlcChange is a point where a policy's preferred LLC for a process changed:
// from `timestamp_ns` on it was `llc` (kNoPreferredLlc: none).
struct LlcChange {
  int64_t timestamp_ns = 0;
  int llc = kNoPreferredLlc;
};

// ScanEvent is one executed scan.
struct ScanEvent {
  int policy = 0;  // index into the session's policies
  std::string comm;  // at most 15 characters, so held without allocating
  int pid = 0;     // the scanning thread's tid
  int cpu = 0;
  int64_t timestamp_ns = 0;
  int cpus_scanned = 0;
  int tgid = 0;    // the scanning process
  int llcs_scanned = 0;
  int64_t scan_ns = 0;  // the model's wall time for the scan
  // Summed occupancy (NICE_0_LOAD fixed point: 1048576 is one CPU's worth)
  // of each LLC the scan examined; a view valid during the write only.
  absl::Span<const LlcOccupancy> llc_occupancy = {};
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_SCAN_EVENT_H_
