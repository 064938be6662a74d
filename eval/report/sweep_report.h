// Writers of a sweep's report (sweep_result.h): one table with a row per
// combination and policy, as aligned text, CSV and JSON, and the seed's
// hackbench layout for a sweep over hackbench groups and fds. Every cell is
// taken from the run's own policy table (policy_table.h), so a sweep row
// reads exactly as the same run's `schedcache ab` row.
//
// Thread contract: pure functions over a const SweepResult; thread-safe as
// long as each call has its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "eval/report/policy_table.h"
#include "eval/report/sweep_result.h"

namespace schedcache {

// SweepLayout picks the text table's shape.
enum class SweepLayout {
  kSweep,      // the varied values, policy, CPUs scanned, scans, agreement
  kHackbench,  // the seed's: MODE GROUPS FDS | per policy CPUs and agreement
};

// ValidateSweepResult returns InvalidArgument, naming the row, when `result`
// has no row, a row's values do not match the axes, its result is malformed
// (ValidateAbResult) or its policies differ from the first row's; and for
// kHackbench when the axes are not exactly `groups` and `fds`.
absl::Status ValidateSweepResult(const SweepResult& result, SweepLayout layout);

// BuildSweepTable is the table of `layout`. REQUIRES: ValidateSweepResult OK.
PolicyTable BuildSweepTable(const SweepResult& result, SweepLayout layout);

// WriteSweepText writes a one-line summary and the table of `layout`.
// Returns ValidateSweepResult's errors, or DataLoss when the stream fails.
absl::Status WriteSweepText(const SweepResult& result, SweepLayout layout,
                            std::ostream& out);

// WriteSweepCsv writes the kSweep table as CSV. Errors as WriteSweepText.
absl::Status WriteSweepCsv(const SweepResult& result, std::ostream& out);

// WriteSweepJson writes {input, axes, rows, failures}: a row per combination
// and policy with the varied values by key, agreement (null when the policy
// had no decisions), CPUs scanned and scan counts. Errors as WriteSweepText.
absl::Status WriteSweepJson(const SweepResult& result, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_
