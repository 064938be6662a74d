#include "eval/ab/report_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "eval/ab/ab_report.h"
#include "eval/report/html_report.h"
#include "eval/report/sweep_html.h"
#include "eval/report/sweep_report.h"
#include "eval/report/table_report.h"

namespace schedcache::ab {
namespace {

// WriteFile writes `result` to `path` with `write`, for an A/B result and a
// sweep's alike.
template <typename Result>
absl::Status WriteFile(const std::string& path, const Result& result,
                       absl::Status (*write)(const Result&, std::ostream&)) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    const std::string message =
        absl::StrCat("cannot create ", path, ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message)
                           : absl::NotFoundError(message);
  }
  absl::Status status = write(result, out);
  out.close();
  if (status.ok() && !out) {
    status = absl::DataLossError(absl::StrCat("cannot write ", path));
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(path, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteReportFiles(const AbResult& result, const ReportFiles& files) {
  RETURN_IF_ERROR(WriteFile(files.json, result, &WriteJson));
  RETURN_IF_ERROR(WriteFile(files.csv, result, &WriteCsv));
  return WriteFile(files.html, result, &WriteHtml);
}

absl::Status WriteSweepReportFiles(const SweepResult& result,
                                   const ReportFiles& files) {
  RETURN_IF_ERROR(WriteFile(files.json, result, &WriteSweepJson));
  RETURN_IF_ERROR(WriteFile(files.csv, result, &WriteSweepCsv));
  return WriteFile(files.html, result, &WriteSweepHtml);
}

absl::Status PublishReport(const AbResult& result, const ReportFiles& files,
                           std::ostream& out, std::ostream& err) {
  RETURN_IF_ERROR(WriteTextReport(result, out));
  RETURN_IF_ERROR(WriteReportFiles(result, files));
  for (const std::string* path : {&files.json, &files.csv, &files.html}) {
    if (!path->empty()) err << "wrote " << *path << "\n";
  }
  return absl::OkStatus();
}

}  // namespace schedcache::ab
