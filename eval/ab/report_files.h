// WriteReportFiles writes the A/B result to the files `schedcache ab` was
// asked for (--json, --csv, --html), so the verbs that run an evaluation
// share one way of producing them.
//
// Thread contract: a pure function over a const AbResult; thread-safe when
// the paths differ.
#ifndef SCHEDCACHE_EVAL_AB_REPORT_FILES_H_
#define SCHEDCACHE_EVAL_AB_REPORT_FILES_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "eval/report/ab_result.h"
#include "eval/report/sweep_result.h"

namespace schedcache::ab {

// ReportFiles names the outputs; an empty path is not written.
struct ReportFiles {
  std::string json;
  std::string csv;
  std::string html;
};

// WriteReportFiles writes each named file (created or truncated). Returns
// the first error, naming the file: PermissionDenied/NotFound when it
// cannot be opened, or the writer's error.
absl::Status WriteReportFiles(const AbResult& result, const ReportFiles& files);

// WriteSweepReportFiles is WriteReportFiles for a sweep (sweep_report.h,
// sweep_html.h). Errors as WriteReportFiles.
absl::Status WriteSweepReportFiles(const SweepResult& result,
                                   const ReportFiles& files);

// PublishReport is what the verbs that end in a report do: the text table
// to `out`, then WriteReportFiles, then a "wrote FILE" line on `err` for
// each file. Errors as WriteTextReport and WriteReportFiles.
absl::Status PublishReport(const AbResult& result, const ReportFiles& files,
                           std::ostream& out, std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_REPORT_FILES_H_
