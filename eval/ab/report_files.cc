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

// WriteFile writes `report` to `path` with `write`, for an A/B report and a
// sweep's alike.
template <typename Report>
absl::Status WriteFile(const std::string& path, const Report& report,
                       absl::Status (*write)(const Report&, std::ostream&)) {
  if (path.empty()) return absl::OkStatus();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    const std::string message =
        absl::StrCat("cannot create ", path, ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message)
                           : absl::NotFoundError(message);
  }
  absl::Status status = write(report, out);
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

absl::Status WriteReportFiles(const v1::AbReport& report,
                              const ReportFiles& files) {
  RETURN_IF_ERROR(WriteFile(files.json, report, &WriteJson));
  RETURN_IF_ERROR(WriteFile(files.csv, report, &WriteCsv));
  RETURN_IF_ERROR(
      WriteFile(files.cache_groups_csv, report, &WriteCacheGroupsCsv));
  return WriteFile(files.html, report, &WriteHtml);
}

absl::Status WriteSweepReportFiles(const v1::SweepReport& report,
                                   const ReportFiles& files) {
  RETURN_IF_ERROR(WriteFile(files.json, report, &WriteSweepJson));
  RETURN_IF_ERROR(WriteFile(files.csv, report, &WriteSweepCsv));
  return WriteFile(files.html, report, &WriteSweepHtml);
}

absl::Status PublishReport(const AbResult& result, const ReportFiles& files,
                           std::ostream& out, std::ostream& err) {
  const v1::AbReport report = AbResultToProto(result);
  RETURN_IF_ERROR(WriteTextReport(report, out));
  RETURN_IF_ERROR(WriteReportFiles(report, files));
  for (const std::string* path :
       {&files.json, &files.csv, &files.cache_groups_csv, &files.html}) {
    if (!path->empty()) err << "wrote " << *path << "\n";
  }
  return absl::OkStatus();
}

}  // namespace schedcache::ab
