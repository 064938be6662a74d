// Writer of `schedcache ab --scan-trace FILE`: one line per executed scan in
// the seed's debug tracepoint format, as ftrace prints it,
//
//     redis-server-24660   [195] .....  2916.005989: sched_cache_scan: comm=redis-server pid=24660 scan=384
//
// so that the seed's own analysis (grep 'scan=' | awk ...) applies
// unchanged. A trace of one policy is only meaningful on its own, so each
// policy gets its own file: FILE with the policy name inserted before the
// extension (scans.txt -> scans.full-scan.txt, scans.visited-scan.txt).
// Each file opens with ftrace-style '#' comment lines naming its policy;
// they never contain "scan=".
//
// Thread contract: ScanTraceWriter is thread-compatible; the functions are
// thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_SCAN_TRACE_H_
#define SCHEDCACHE_EVAL_REPORT_SCAN_TRACE_H_

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/report/scan_event.h"

namespace schedcache {

// ScanTracePath returns `path` with ".<policy>" inserted before the
// extension of its last component, or appended when it has none.
std::string ScanTracePath(absl::string_view path, absl::string_view policy);

// FormatScanTraceLine returns `event` as one trace line, without the
// newline. REQUIRES: event.timestamp_ns >= 0.
std::string FormatScanTraceLine(const ScanEvent& event);

// ScanTraceWriter streams ScanEvents into one file per policy as they come.
class ScanTraceWriter {
 public:
  // Open creates (truncating) ScanTracePath(path, p) for each policy p, in
  // order, and writes their headers. Returns InvalidArgument for no
  // policies or a repeated name, and the open error (NotFound,
  // PermissionDenied, ...) naming the file.
  static absl::StatusOr<ScanTraceWriter> Open(absl::string_view path,
                                              const std::vector<std::string>& policies);

  // Write appends `event` to its policy's file. Returns InvalidArgument when
  // event.policy is out of range or the timestamp is negative, DataLoss
  // when the file cannot be written.
  absl::Status Write(const ScanEvent& event);

  // Close flushes and closes every file; DataLoss names a file that failed.
  absl::Status Close();

  // paths returns the files, one per policy in Open's order.
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  ScanTraceWriter() = default;

  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<std::ofstream>> files_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_SCAN_TRACE_H_
