#include "eval/ab/sweep_command.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/ab/ab_report.h"
#include "policies/builtin_policies.h"

namespace schedcache::ab {
namespace {

std::string Named(const SweepResult& result,
                  const std::vector<std::string>& values) {
  std::string text;
  for (size_t a = 0; a < values.size(); ++a) {
    absl::StrAppend(&text, a == 0 ? "" : " ", result.axes[a].key, "=",
                    values[a]);
  }
  return text;
}

}  // namespace

absl::Status RunSweepCommand(const SweepCommand& command, std::ostream& out,
                             std::ostream& err) {
  // A sweep's rows are combinations, each with groups of its own.
  if (!command.files.cache_groups_csv.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--cache-groups-csv ", command.files.cache_groups_csv,
        ": a sweep has no one cache-group table; run one combination alone"));
  }
  ASSIGN_OR_RETURN(const PolicyRegistry registry, BuildPolicyRegistry({}));
  ASSIGN_OR_RETURN(const SweepPlan plan,
                   MakeSweepPlan(command.base, command.axes, registry));
  bool shown = false;
  SweepProgress progress;
  if (command.progress) {
    progress = [&err, &shown](size_t done, size_t total) {
      err << absl::StrFormat("\r%d/%d combinations", done, total) << std::flush;
      shown = true;
    };
  }
  const SweepResult result = RunSweep(plan, registry, command.jobs,
                                      command.input, progress);
  if (shown) err << "\r\033[K" << std::flush;
  for (const SweepFailure& failure : result.failures) {
    err << "schedcache: " << Named(result, failure.values) << ": "
        << failure.error << "\n";
  }
  if (!result.rows.empty()) {
    const v1::SweepReport report = SweepResultToProto(result);
    RETURN_IF_ERROR(WriteSweepText(report, command.layout, out));
    RETURN_IF_ERROR(WriteSweepReportFiles(report, command.files));
    for (const std::string* path :
         {&command.files.json, &command.files.csv, &command.files.html}) {
      if (!path->empty()) err << "wrote " << *path << "\n";
    }
  }
  if (result.failures.empty()) return absl::OkStatus();
  return absl::AbortedError(absl::StrCat(
      result.failures.size(), " of ", plan.runs.size(),
      " combinations failed, the first: ",
      Named(result, result.failures[0].values), ": ",
      result.failures[0].error));
}

}  // namespace schedcache::ab
