// WriteReportFiles writes the A/B report to the files `schedcache ab` was
// asked for (--json, --csv, --cache-groups-csv, --html), so the verbs that run an evaluation
// share one way of producing them; PublishReport converts their result to
// the report's message (ab_report.h) once, for every writer.
//
// Thread contract: pure functions over const values; thread-safe when the
// paths differ.
#ifndef SCHEDCACHE_EVAL_AB_REPORT_FILES_H_
#define SCHEDCACHE_EVAL_AB_REPORT_FILES_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "eval/ab/ab_result.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::ab {

// ReportFiles names the outputs; an empty path is not written.
struct ReportFiles {
  std::string json;
  std::string csv;
  std::string cache_groups_csv;  // an A/B report's only; a sweep has none
  std::string html;
};

// WriteReportFiles writes each named file (created or truncated). Returns
// the first error, naming the file: PermissionDenied/NotFound when it
// cannot be opened, or the writer's error.
absl::Status WriteReportFiles(const v1::AbReport& report,
                              const ReportFiles& files);

// WriteSweepReportFiles is WriteReportFiles for a sweep (sweep_report.h,
// sweep_html.h, ab_report.h's WriteSweepJson). Errors as WriteReportFiles.
// REQUIRES: files.cache_groups_csv is empty (RunSweepCommand refuses it).
absl::Status WriteSweepReportFiles(const v1::SweepReport& report,
                                   const ReportFiles& files);

// PublishReport is what the verbs that end in a report do: `result` to its
// message (AbResultToProto), the text table to `out`, then
// WriteReportFiles, then a "wrote FILE" line on `err` for each file.
// Errors as WriteTextReport and WriteReportFiles.
absl::Status PublishReport(const AbResult& result, const ReportFiles& files,
                           std::ostream& out, std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_REPORT_FILES_H_
