#include "eval/report/sweep_report.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/table_report.h"

namespace schedcache {
namespace {

// Cell returns the cell of `csv_name` in `table`'s row `row`. REQUIRES: the
// column exists (BuildPolicyTable always has the columns asked for here).
const std::string& Cell(const PolicyTable& table, size_t row,
                        absl::string_view csv_name) {
  size_t c = 0;
  while (c < table.columns.size() && table.columns[c].csv_name != csv_name) ++c;
  ABSL_RAW_CHECK(c < table.columns.size(), "the policy table lost a column");
  return table.rows[row][c];
}

// ValueOf returns `row`'s value of axis `key`, empty when there is none.
std::string ValueOf(const v1::SweepReport& report, const v1::SweepRow& row,
                    absl::string_view key) {
  for (int a = 0; a < report.axes_size(); ++a) {
    if (report.axes(a).key() == key) return row.values(a);
  }
  return "";
}

// RunTable is the policy table (policy_table.h) of one combination's run.
PolicyTable RunTable(const v1::SweepRow& row) {
  std::vector<const v1::PolicyReport*> policies;
  for (const v1::PolicyReport& policy : row.policies()) {
    policies.push_back(&policy);
  }
  return BuildPolicyTable(policies, SawKernelDecisions(row.input()));
}

PolicyTable SweepTable(const v1::SweepReport& report) {
  const std::string& reference = report.rows(0).policies(0).policy();
  PolicyTable table;
  for (const v1::SweepAxis& axis : report.axes()) {
    table.columns.push_back(
        {"", axis.key(), axis.key(), axis.key() != "topology"});
  }
  const std::string cpus = "CPUs scanned";
  table.columns.push_back({"", "policy", "policy", false});
  table.columns.push_back({cpus, "mean", "cpus_scanned_mean"});
  table.columns.push_back({cpus, "p50", "cpus_scanned_p50"});
  table.columns.push_back({"scans", "executed", "scans"});
  table.columns.push_back(
      {absl::StrCat("vs ", reference), "agree(%)", "agreement_pct"});
  for (const v1::SweepRow& row : report.rows()) {
    const PolicyTable run = RunTable(row);
    for (size_t p = 0; p < run.rows.size(); ++p) {
      std::vector<std::string> cells(row.values().begin(), row.values().end());
      for (const char* name : {"policy", "cpus_scanned_mean",
                               "cpus_scanned_p50", "scans", "agreement_pct"}) {
        cells.push_back(Cell(run, p, name));
      }
      table.rows.push_back(std::move(cells));
    }
  }
  return table;
}

// HackbenchTable is the seed's hackbench layout (patch v6 cover letter:
// "MODE GROUPS FDS | baseline | schedcache | ..."), with each policy's CPUs
// scanned and agreement where the seed has its run time.
PolicyTable HackbenchTable(const v1::SweepReport& report) {
  PolicyTable table;
  table.columns = {{"", "MODE", "mode", false},
                   {"", "GROUPS", "groups"},
                   {"", "FDS", "fds"}};
  for (const v1::PolicyReport& policy : report.rows(0).policies()) {
    const std::string& name = policy.policy();
    table.columns.push_back({name, "CPUs/scan", name + "_cpus_scanned_mean"});
    table.columns.push_back({name, "p50", name + "_cpus_scanned_p50"});
    table.columns.push_back({name, "agree(%)", name + "_agreement_pct"});
  }
  for (const v1::SweepRow& row : report.rows()) {
    const PolicyTable run = RunTable(row);
    std::vector<std::string> cells = {"threads", ValueOf(report, row, "groups"),
                                      ValueOf(report, row, "fds")};
    for (size_t p = 0; p < run.rows.size(); ++p) {
      for (const char* name :
           {"cpus_scanned_mean", "cpus_scanned_p50", "agreement_pct"}) {
        cells.push_back(Cell(run, p, name));
      }
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// CheckValues is InvalidArgument naming `what` when `values` does not hold
// one value per axis.
absl::Status CheckValues(const v1::SweepReport& report,
                         const google::protobuf::RepeatedPtrField<std::string>& values,
                         absl::string_view what) {
  if (values.size() == report.axes_size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "SweepReport.", what, " has ", values.size(), " values for ",
      report.axes_size(), " axes"));
}

}  // namespace

absl::Status ValidateSweepReport(const v1::SweepReport& report,
                                 SweepLayout layout) {
  if (report.rows().empty()) {
    return absl::InvalidArgumentError("SweepReport.rows is empty");
  }
  const v1::SweepRow& first = report.rows(0);
  for (int r = 0; r < report.rows_size(); ++r) {
    const v1::SweepRow& row = report.rows(r);
    RETURN_IF_ERROR(
        CheckValues(report, row.values(), absl::StrCat("rows[", r, "]")));
    bool same = !row.policies().empty() &&
                row.policies_size() == first.policies_size();
    for (int p = 0; same && p < first.policies_size(); ++p) {
      same = row.policies(p).policy() == first.policies(p).policy();
    }
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SweepReport.rows[", r, "] has no policies or other policies than "
          "rows[0]"));
    }
  }
  for (int f = 0; f < report.failures_size(); ++f) {
    RETURN_IF_ERROR(CheckValues(report, report.failures(f).values(),
                                absl::StrCat("failures[", f, "]")));
  }
  if (layout == SweepLayout::kHackbench &&
      (report.axes_size() != 2 || report.axes(0).key() != "groups" ||
       report.axes(1).key() != "fds")) {
    return absl::InvalidArgumentError(
        "the hackbench table needs the axes groups and fds, in that order");
  }
  return absl::OkStatus();
}

PolicyTable BuildSweepTable(const v1::SweepReport& report, SweepLayout layout) {
  return layout == SweepLayout::kHackbench ? HackbenchTable(report)
                                           : SweepTable(report);
}

absl::Status WriteSweepText(const v1::SweepReport& report, SweepLayout layout,
                            std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepReport(report, layout));
  std::vector<std::string> keys;
  for (const v1::SweepAxis& axis : report.axes()) keys.push_back(axis.key());
  const v1::AbInput& first = report.rows(0).input();
  out << "sweep:     " << report.input() << " over " << absl::StrJoin(keys, " x ")
      << ": " << report.rows_size() << " combinations";
  if (!report.failures().empty()) out << ", " << report.failures_size() << " failed";
  out << "\nfirst:     " << first.description() << "\n"
      << "topology:  " << first.topology() << " (" << first.topology_source()
      << ")\n\n"
      << RenderTable(BuildSweepTable(report, layout));
  return report_internal::StreamStatus(out, "the sweep table");
}

absl::Status WriteSweepCsv(const v1::SweepReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepReport(report, SweepLayout::kSweep));
  WriteCsvTable(SweepTable(report), out);
  return report_internal::StreamStatus(out, "the sweep CSV");
}

}  // namespace schedcache
