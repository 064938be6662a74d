// Writers of the A/B report's table for a terminal (aligned text, in the
// style of the seed's tables) and for spreadsheets (CSV).
//
// Thread contract: pure functions over a const schedcache.v1.AbReport;
// thread-safe as long as each call has its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_TABLE_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_TABLE_REPORT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "eval/report/policy_table.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache {

// WriteTextReport writes a summary of the input, then the per-policy table
// and the cost table (policy_table.h) with aligned columns, to `out`.
// Returns InvalidArgument when `report` is malformed (see
// ValidateAbReport), DataLoss when the stream fails.
absl::Status WriteTextReport(const v1::AbReport& report, std::ostream& out);

// WriteCsv writes a header row and one row per policy with the text
// tables' columns, the policy table's then the cost table's (RFC 4180
// quoting). Errors as WriteTextReport.
absl::Status WriteCsv(const v1::AbReport& report, std::ostream& out);

// WriteCacheGroupsCsv writes the cache-group table (BuildCacheGroupTable)
// with every member: a header row and one row per group, in the report's
// order (busiest first); only the header when no sample named a group.
// Errors as WriteTextReport.
absl::Status WriteCacheGroupsCsv(const v1::AbReport& report,
                                 std::ostream& out);

// RenderTable lays `table` out as the seed does: a row of group headings, a
// row of column headings, a rule with '+' at group boundaries, then the rows.
// The sweep report prints its tables through it too.
std::string RenderTable(const PolicyTable& table);

// WriteCsvTable writes a header row of the columns' csv_name and one row per
// table row.
void WriteCsvTable(const PolicyTable& table, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_TABLE_REPORT_H_
