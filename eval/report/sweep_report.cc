#include "eval/report/sweep_report.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "eval/report/internal/json_writer.h"
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
std::string ValueOf(const SweepResult& result, const SweepRow& row,
                    absl::string_view key) {
  for (size_t a = 0; a < result.axes.size(); ++a) {
    if (result.axes[a].key == key) return row.values[a];
  }
  return "";
}

PolicyTable SweepTable(const SweepResult& result) {
  const std::string reference =
      result.rows[0].result.policies[0].report.name;
  PolicyTable table;
  for (const SweepAxis& axis : result.axes) {
    table.columns.push_back({"", axis.key, axis.key, axis.key != "topology"});
  }
  const std::string cpus = "CPUs scanned";
  table.columns.push_back({"", "policy", "policy", false});
  table.columns.push_back({cpus, "mean", "cpus_scanned_mean"});
  table.columns.push_back({cpus, "p50", "cpus_scanned_p50"});
  table.columns.push_back({"scans", "executed", "scans"});
  table.columns.push_back(
      {absl::StrCat("vs ", reference), "agree(%)", "agreement_pct"});
  for (const SweepRow& row : result.rows) {
    const PolicyTable run = BuildPolicyTable(row.result);
    for (size_t p = 0; p < run.rows.size(); ++p) {
      std::vector<std::string> cells = row.values;
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
PolicyTable HackbenchTable(const SweepResult& result) {
  PolicyTable table;
  table.columns = {{"", "MODE", "mode", false},
                   {"", "GROUPS", "groups"},
                   {"", "FDS", "fds"}};
  for (const PolicyResult& policy : result.rows[0].result.policies) {
    const std::string& name = policy.report.name;
    table.columns.push_back({name, "CPUs/scan", name + "_cpus_scanned_mean"});
    table.columns.push_back({name, "p50", name + "_cpus_scanned_p50"});
    table.columns.push_back({name, "agree(%)", name + "_agreement_pct"});
  }
  for (const SweepRow& row : result.rows) {
    const PolicyTable run = BuildPolicyTable(row.result);
    std::vector<std::string> cells = {"threads", ValueOf(result, row, "groups"),
                                      ValueOf(result, row, "fds")};
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

void WriteValues(const SweepResult& result,
                 const std::vector<std::string>& values,
                 report_internal::JsonWriter& json) {
  json.BeginObject();
  for (size_t a = 0; a < result.axes.size(); ++a) {
    json.Key(result.axes[a].key);
    json.String(values[a]);
  }
  json.EndObject();
}

void WriteRow(const SweepResult& result, const SweepRow& row,
              const PolicyReport& r, report_internal::JsonWriter& json) {
  json.BeginObject();
  json.Key("values");
  WriteValues(result, row.values, json);
  json.Key("policy");
  json.String(r.name);
  json.Key("agreement");  // null: no decisions, no share to report
  if (r.agreement.has_value()) {
    json.Double(*r.agreement);
  } else {
    json.Null();
  }
  json.Key("decisions");
  json.Uint(r.decisions);
  json.Key("cpusScanned");
  report_internal::WriteDistribution(json, r.cpus_scanned);
  json.Key("scans");
  json.Uint(r.scans);
  json.Key("scansSkipped");
  json.Uint(r.scans_skipped);
  json.Key("scansAborted");
  json.Uint(r.scans_aborted);
  json.EndObject();
}

}  // namespace

absl::Status ValidateSweepResult(const SweepResult& result,
                                 SweepLayout layout) {
  if (result.rows.empty()) {
    return absl::InvalidArgumentError("SweepResult.rows is empty");
  }
  const std::vector<PolicyResult>& first = result.rows[0].result.policies;
  for (size_t r = 0; r < result.rows.size(); ++r) {
    const SweepRow& row = result.rows[r];
    if (row.values.size() != result.axes.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SweepResult.rows[", r, "] has ", row.values.size(),
                       " values for ", result.axes.size(), " axes"));
    }
    absl::Status valid = ValidateAbResult(row.result);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SweepResult.rows[", r, "].result: ", valid.message()));
    }
    bool same = row.result.policies.size() == first.size();
    for (size_t p = 0; same && p < first.size(); ++p) {
      same = row.result.policies[p].report.name == first[p].report.name;
    }
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SweepResult.rows[", r, "] has other policies than rows[0]"));
    }
  }
  if (layout == SweepLayout::kHackbench &&
      (result.axes.size() != 2 || result.axes[0].key != "groups" ||
       result.axes[1].key != "fds")) {
    return absl::InvalidArgumentError(
        "the hackbench table needs the axes groups and fds, in that order");
  }
  return absl::OkStatus();
}

PolicyTable BuildSweepTable(const SweepResult& result, SweepLayout layout) {
  return layout == SweepLayout::kHackbench ? HackbenchTable(result)
                                           : SweepTable(result);
}

absl::Status WriteSweepText(const SweepResult& result, SweepLayout layout,
                            std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepResult(result, layout));
  std::vector<std::string> keys;
  for (const SweepAxis& axis : result.axes) keys.push_back(axis.key);
  const AbInput& first = result.rows[0].result.input;
  out << "sweep:     " << result.input << " over " << absl::StrJoin(keys, " x ")
      << ": " << result.rows.size() << " combinations";
  if (!result.failures.empty()) out << ", " << result.failures.size() << " failed";
  out << "\nfirst:     " << first.description << "\n"
      << "topology:  " << first.topology << " (" << first.topology_source
      << ")\n\n"
      << RenderTable(BuildSweepTable(result, layout));
  return report_internal::StreamStatus(out, "the sweep table");
}

absl::Status WriteSweepCsv(const SweepResult& result, std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepResult(result, SweepLayout::kSweep));
  WriteCsvTable(SweepTable(result), out);
  return report_internal::StreamStatus(out, "the sweep CSV");
}

absl::Status WriteSweepJson(const SweepResult& result, std::ostream& out) {
  RETURN_IF_ERROR(ValidateSweepResult(result, SweepLayout::kSweep));
  report_internal::JsonWriter json;
  json.BeginObject();
  json.Key("input");
  json.String(result.input);
  json.Key("reference");
  json.String(result.rows[0].result.policies[0].report.name);
  json.Key("axes");
  json.BeginArray();
  for (const SweepAxis& axis : result.axes) {
    json.BeginObject();
    json.Key("key");
    json.String(axis.key);
    json.Key("values");
    json.BeginArray();
    for (const std::string& value : axis.values) json.String(value);
    json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.Key("rows");
  json.BeginArray();
  for (const SweepRow& row : result.rows) {
    for (const PolicyResult& policy : row.result.policies) {
      WriteRow(result, row, policy.report, json);
    }
  }
  json.EndArray();
  json.Key("failures");
  json.BeginArray();
  for (const SweepFailure& failure : result.failures) {
    json.BeginObject();
    json.Key("values");
    WriteValues(result, failure.values, json);
    json.Key("error");
    json.String(failure.error);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  out << json.text() << "\n";
  return report_internal::StreamStatus(out, "the sweep JSON");
}

}  // namespace schedcache
