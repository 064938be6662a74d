// RejectionReason: the small fixed set of reasons an ingested event is
// rejected for, as schedcache_ingest_rejections_total{reason} counts them
// (docs/OPERATIONS.md). The exact reason, with the field and its value,
// stays in the IngestSummary's messages; this is its class.
//
// Thread contract: pure functions.
#ifndef SCHEDCACHE_SERVER_REJECTION_REASON_H_
#define SCHEDCACHE_SERVER_REJECTION_REASON_H_

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace schedcache {

enum class RejectionReason {
  kKind,       // an EventColumns row whose kind is no EventKind
  kCpu,        // a CPU not in the session's topology, or offline
  kTimestamp,  // out of range, too far ahead of the session clock, or
               // before the CPU's previous event
  kIds,        // a tgid or tid that is not > 0 (or half of an idle pair)
  kField,      // another field out of its range (delta_ns, nr_threads,
               // numa_node, footprint_pages, a kernel decision's
               // preferred_cpu)
  kOther,      // none of the above: a rejection this list does not know
};
inline constexpr int kRejectionReasonCount = 6;

// RejectionReasonOf classifies a rejected event's error by the field its
// message starts with: every event error of the engine and of the batch
// decoder names the offending field first ("cpu 9 is offline",
// "timestamp_ns -1 is outside ...").
RejectionReason RejectionReasonOf(const absl::Status& error);

// RejectionReasonName is the metric label value: "kind", "cpu",
// "timestamp", "ids", "field" or "other".
absl::string_view RejectionReasonName(RejectionReason reason);

// RejectionCounts counts rejections per reason, indexed by the enum.
using RejectionCounts = std::array<uint64_t, kRejectionReasonCount>;

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_REJECTION_REASON_H_
