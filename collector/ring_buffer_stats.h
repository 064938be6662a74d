// RingBufferStats is what the kernel reports in a per-CPU ring buffer's
// `per_cpu/cpuN/stats` file about events it lost, so the live collector can
// count them instead of losing them silently.
//
// Thread contract: plain values and a pure function, safe for concurrent use.
#ifndef SCHEDCACHE_COLLECTOR_RING_BUFFER_STATS_H_
#define SCHEDCACHE_COLLECTOR_RING_BUFFER_STATS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache::host {

struct RingBufferStats {
  // Events overwritten before they were read (the buffer is in overwrite
  // mode, the kernel's default, and the reader fell behind).
  std::uint64_t overrun = 0;
  // Events lost because a writer interrupted another mid-commit.
  std::uint64_t commit_overrun = 0;
  // Events refused because the buffer was full (non-overwrite mode).
  std::uint64_t dropped_events = 0;

  std::uint64_t lost() const {
    return overrun + commit_overrun + dropped_events;
  }
  RingBufferStats& operator+=(const RingBufferStats& other);
  friend bool operator==(const RingBufferStats&,
                         const RingBufferStats&) = default;
};

// ParseRingBufferStats reads the text of a stats file, lines `key: value`
// such as "overrun: 0". Keys it does not use (entries, bytes, timestamps)
// are skipped, so a kernel that adds keys still parses. `source` names the
// file in errors. Returns InvalidArgument naming the source, the line number
// and the line when a line has no ':' or a used key's value is not a
// non-negative integer, and when one of overrun, commit overrun or dropped
// events is missing (the count would otherwise read as 0).
absl::StatusOr<RingBufferStats> ParseRingBufferStats(absl::string_view text,
                                                     absl::string_view source);

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_RING_BUFFER_STATS_H_
