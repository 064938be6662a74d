// StreamStatus turns a stream's state after writing into an absl::Status,
// for the report writers.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_STREAM_STATUS_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_STREAM_STATUS_H_

#include <ostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace schedcache::report_internal {

// StreamStatus flushes `out` and returns DataLoss naming `what` if any write
// to it failed.
inline absl::Status StreamStatus(std::ostream& out, absl::string_view what) {
  out.flush();
  if (!out) return absl::DataLossError(absl::StrCat("writing ", what, " failed"));
  return absl::OkStatus();
}

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_STREAM_STATUS_H_
