#include "server/rejection_reason.h"

#include "absl/strings/match.h"

namespace schedcache {
namespace {

struct FieldReason {
  absl::string_view prefix;
  RejectionReason reason;
};

// kFieldReasons maps each message's leading field to its reason; the space
// keeps "tid " from matching "tidx", and "tgid " from "tgids".
constexpr FieldReason kFieldReasons[] = {
    {"kind ", RejectionReason::kKind},
    {"cpu ", RejectionReason::kCpu},
    {"timestamp_ns ", RejectionReason::kTimestamp},
    {"tgid ", RejectionReason::kIds},
    {"tid ", RejectionReason::kIds},
    {"hand-over tgid ", RejectionReason::kIds},
    {"delta_ns ", RejectionReason::kField},
    {"nr_threads ", RejectionReason::kField},
    {"numa_node ", RejectionReason::kField},
    {"footprint_pages ", RejectionReason::kField},
    {"preferred_cpu ", RejectionReason::kField},
};

}  // namespace

RejectionReason RejectionReasonOf(const absl::Status& error) {
  for (const FieldReason& field : kFieldReasons) {
    if (absl::StartsWith(error.message(), field.prefix)) return field.reason;
  }
  return RejectionReason::kOther;
}

absl::string_view RejectionReasonName(RejectionReason reason) {
  switch (reason) {
    case RejectionReason::kKind:
      return "kind";
    case RejectionReason::kCpu:
      return "cpu";
    case RejectionReason::kTimestamp:
      return "timestamp";
    case RejectionReason::kIds:
      return "ids";
    case RejectionReason::kField:
      return "field";
    case RejectionReason::kOther:
      return "other";
  }
  return "other";
}

}  // namespace schedcache
