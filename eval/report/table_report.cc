#include "eval/report/table_report.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "eval/report/internal/stream_status.h"
#include "eval/report/policy_table.h"

namespace schedcache {
namespace {

// Group is a run of adjacent columns under one heading.
struct Group {
  std::string title;
  size_t first = 0;  // column index
  size_t count = 0;
};

std::vector<Group> GroupColumns(const PolicyTable& table) {
  std::vector<Group> groups;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (groups.empty() || groups.back().title != table.columns[c].group) {
      groups.push_back({table.columns[c].group, c, 0});
    }
    ++groups.back().count;
  }
  return groups;
}

std::string Pad(absl::string_view text, size_t width, bool right) {
  const std::string fill(width > text.size() ? width - text.size() : 0, ' ');
  return right ? absl::StrCat(fill, text) : absl::StrCat(text, fill);
}

std::string Center(absl::string_view text, size_t width) {
  const size_t left = width > text.size() ? (width - text.size()) / 2 : 0;
  return Pad(absl::StrCat(std::string(left, ' '), text), width, false);
}

void StripTrailingSpaces(std::string& line) {
  line.erase(line.find_last_not_of(' ') + 1);
}

// kColumnGap separates columns inside a group; groups are separated by " | ".
constexpr size_t kColumnGap = 2;

}  // namespace

std::string RenderTable(const PolicyTable& table) {
  std::vector<size_t> width(table.columns.size());
  for (size_t c = 0; c < table.columns.size(); ++c) {
    width[c] = table.columns[c].name.size();
    for (const auto& row : table.rows) width[c] = std::max(width[c], row[c].size());
  }
  const std::vector<Group> groups = GroupColumns(table);
  std::vector<size_t> group_width;
  for (const Group& g : groups) {
    size_t w = kColumnGap * (g.count - 1);
    for (size_t c = g.first; c < g.first + g.count; ++c) w += width[c];
    // A heading wider than its columns widens the group's first column.
    if (g.title.size() > w) {
      width[g.first] += g.title.size() - w;
      w = g.title.size();
    }
    group_width.push_back(w);
  }
  auto line = [&](auto cell_of_group, absl::string_view separator) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < groups.size(); ++i) {
      cells.push_back(cell_of_group(i));
    }
    std::string text = absl::StrJoin(cells, separator);
    StripTrailingSpaces(text);
    return absl::StrCat(text, "\n");
  };
  auto columns_of = [&](size_t i, auto cell_text) {
    std::vector<std::string> cells;
    const Group& g = groups[i];
    for (size_t c = g.first; c < g.first + g.count; ++c) {
      cells.push_back(Pad(cell_text(c), width[c], table.columns[c].numeric));
    }
    return absl::StrJoin(cells, std::string(kColumnGap, ' '));
  };
  std::string out;
  absl::StrAppend(&out, line([&](size_t i) { return Center(groups[i].title, group_width[i]); },
                             " | "));
  absl::StrAppend(&out, line([&](size_t i) {
                    return columns_of(i, [&](size_t c) { return table.columns[c].name; });
                  },
                  " | "));
  absl::StrAppend(&out, line([&](size_t i) { return std::string(group_width[i], '-'); },
                             "-+-"));
  for (const auto& row : table.rows) {
    absl::StrAppend(&out, line([&](size_t i) {
                      return columns_of(i, [&](size_t c) { return row[c]; });
                    },
                    " | "));
  }
  return out;
}

namespace {

std::string CsvField(absl::string_view field) {
  if (field.find_first_of(",\"\r\n") == absl::string_view::npos) {
    return std::string(field);
  }
  std::string quoted = "\"";
  for (char ch : field) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  quoted += '"';
  return quoted;
}

std::string CsvRow(const std::vector<std::string>& fields) {
  std::vector<std::string> quoted;
  for (const std::string& f : fields) quoted.push_back(CsvField(f));
  // RFC 4180 ends records with CRLF; spreadsheets and Python's csv module
  // accept plain LF, which keeps the file friendly to grep and diff.
  return absl::StrCat(absl::StrJoin(quoted, ","), "\n");
}

}  // namespace

void WriteCsvTable(const PolicyTable& table, std::ostream& out) {
  std::vector<std::string> header;
  for (const TableColumn& column : table.columns) header.push_back(column.csv_name);
  out << CsvRow(header);
  for (const auto& row : table.rows) out << CsvRow(row);
}

absl::Status WriteTextReport(const v1::AbReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbReport(report));
  const v1::AbInput& in = report.input();
  out << "input:     " << in.description() << "\n"
      << "topology:  " << in.topology() << " (" << in.topology_source() << ")\n"
      << absl::StrFormat(
             "samples:   %d samples, %d hand-overs, %d malformed lines, "
             "%.6f s at HZ %d\n",
             in.samples(), in.handovers(), in.malformed_lines(),
             static_cast<double>(in.duration_ns()) / 1e9, in.hz());
  for (const std::string& line : in.malformed_examples()) {
    out << "malformed: " << line << "\n";
  }
  if (SawKernelDecisions(in)) {
    out << absl::StrFormat(
        "kernel:    %d decisions, %d of them for untracked processes; \"vs "
        "kernel\": at the kernel's scans (docs/EVALUATION.md)\n",
        in.kernel_decisions(), in.kernel_decisions_unmatched());
  }
  out << "\n" << RenderTable(BuildPolicyTable(report)) << "\n"
      << CostTableCaption(report) << "\n"
      << RenderTable(BuildCostTable(report));
  if (report.cache_groups_size() > 0) {
    out << "\ncache groups (docs/MODEL.md, Cache groups), busiest first; a "
           "member's final preferred LLC is its group's\n"
        << RenderTable(BuildCacheGroupTable(report));
  }
  return report_internal::StreamStatus(out, "the text report");
}

absl::Status WriteCsv(const v1::AbReport& report, std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbReport(report));
  // One row per policy: the policy table's columns, then the cost table's
  // after its policy column.
  PolicyTable table = BuildPolicyTable(report);
  const PolicyTable cost = BuildCostTable(report);
  table.columns.insert(table.columns.end(), cost.columns.begin() + 1,
                       cost.columns.end());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    table.rows[r].insert(table.rows[r].end(), cost.rows[r].begin() + 1,
                         cost.rows[r].end());
  }
  WriteCsvTable(table, out);
  return report_internal::StreamStatus(out, "the CSV report");
}

absl::Status WriteCacheGroupsCsv(const v1::AbReport& report,
                                 std::ostream& out) {
  RETURN_IF_ERROR(ValidateAbReport(report));
  WriteCsvTable(BuildCacheGroupTable(
                    report, std::numeric_limits<int>::max()),
                out);
  return report_internal::StreamStatus(out, "the cache-group CSV");
}

}  // namespace schedcache
