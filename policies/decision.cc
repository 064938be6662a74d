#include "policies/decision.h"

namespace schedcache {

const char* NoPreferenceReasonName(NoPreferenceReason reason) {
  switch (reason) {
    case NoPreferenceReason::kNone:
      return "none";
    case NoPreferenceReason::kNoData:
      return "no data";
    case NoPreferenceReason::kSingleThread:
      return "single thread";
    case NoPreferenceReason::kTooManyThreads:
      return "too many threads";
    case NoPreferenceReason::kFootprintTooLarge:
      return "footprint too large";
    case NoPreferenceReason::kTimedOut:
      return "timed out";
    case NoPreferenceReason::kDisabled:
      return "disabled";
    case NoPreferenceReason::kNotCacheAware:
      return "not cache aware";
    case NoPreferenceReason::kOtherNumaNode:
      return "thread prefers another NUMA node";
    case NoPreferenceReason::kKernelNone:
      return "kernel has none";
    case NoPreferenceReason::kExited:
      return "exited";
    case NoPreferenceReason::kEvicted:
      return "evicted";
  }
  return "unknown";
}

}  // namespace schedcache
