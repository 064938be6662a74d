// The per-policy tables of an A/B report (the seed's tables: CPUs scanned,
// scans, scan time, agreement with the reference, preferred-LLC stability),
// and the cost of those scans beside the seed's, as formatted cells. The
// text, CSV and HTML writers all print these tables, so their columns never
// drift apart.
//
// Thread contract: plain values and a pure function; thread-safe.
#ifndef SCHEDCACHE_EVAL_REPORT_POLICY_TABLE_H_
#define SCHEDCACHE_EVAL_REPORT_POLICY_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "schedcache/v1/ab_report.pb.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

// TableColumn describes one column.
struct TableColumn {
  std::string group;     // heading over a run of adjacent columns
  std::string name;      // the column's own heading
  std::string csv_name;  // snake_case CSV header
  bool numeric = true;   // right-aligned
};

// PolicyTable holds the columns and one row of formatted cells per policy.
struct PolicyTable {
  std::vector<TableColumn> columns;
  std::vector<std::vector<std::string>> rows;  // rows[i].size() == columns.size()
};

// ValidateAbReport returns InvalidArgument, naming the field, when `report`
// has no policies or a process's per-policy lists do not have one entry
// per policy. Every writer calls it first.
absl::Status ValidateAbReport(const v1::AbReport& report);

// SawKernelDecisions is true when `input` carried kernel decisions, so
// every report form shows the policies' agreement with the kernel.
inline bool SawKernelDecisions(const v1::AbInput& input) {
  return input.kernel_decisions() > 0;
}

// BuildPolicyTable formats `report`'s policies. REQUIRES: ValidateAbReport
// is OK.
PolicyTable BuildPolicyTable(const v1::AbReport& report);

// BuildPolicyTable formats `policies` (the reference first, not empty),
// with the "at kernel scans" columns when `kernel` (SawKernelDecisions):
// the rows of one run, for a report or a sweep's row.
PolicyTable BuildPolicyTable(absl::Span<const v1::PolicyReport* const> policies,
                             bool kernel);

// BuildCostTable formats ComputeCost(report) (policy_cost.h), each policy
// against policies[0], beside the seed's task_cache_work share of cycles
// for the policies the seed measured ("-" for the others and for a ratio
// or rate with nothing to divide by). Same rows as BuildPolicyTable.
// REQUIRES: ValidateAbReport is OK.
PolicyTable BuildCostTable(const v1::AbReport& report);

// BuildCacheGroupTable formats `report`'s cache groups, one row each:
// its name (its id when it has none), id, members (the first
// `members_shown` tgids, then "+" and how many more), runtime in seconds,
// each policy's final preferred LLC ("-": none), then each policy's share
// of the group's runtime on its preferred LLC in percent ("-": the group
// had no runtime, or its report no share). The text and HTML reports show
// kMaxMembersShown members; the CSV shows every member.
// REQUIRES: ValidateAbReport is OK, members_shown >= 1.
inline constexpr int kMaxMembersShown = 8;
PolicyTable BuildCacheGroupTable(const v1::AbReport& report,
                                 int members_shown = kMaxMembersShown);

// CostTableCaption says what the cost table divides by and where the seed's
// figures come from, in one line of plain text (no newline).
// REQUIRES: ValidateAbReport is OK.
std::string CostTableCaption(const v1::AbReport& report);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_POLICY_TABLE_H_
