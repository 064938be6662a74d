// Writers of a sweep's report (the schedcache.v1.SweepReport message): one
// table with a row per combination and policy, as aligned text and CSV, and
// the seed's hackbench layout for a sweep over hackbench groups and fds.
// Every cell is taken from the run's own policy table (policy_table.h), so
// a sweep row reads exactly as the same run's `schedcache ab` row. The
// sweep's JSON is the message itself (eval/ab/ab_report.h).
//
// Thread contract: pure functions over a const SweepReport; thread-safe as
// long as each call has its own stream.
#ifndef SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_
#define SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_

#include <ostream>

#include "absl/status/status.h"
#include "eval/report/policy_table.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache {

// SweepLayout picks the text table's shape.
enum class SweepLayout {
  kSweep,      // the varied values, policy, CPUs scanned, scans, agreement
  kHackbench,  // the seed's: MODE GROUPS FDS | per policy CPUs and agreement
};

// ValidateSweepReport returns InvalidArgument, naming the row, when
// `report` has no row, a row's or a failure's values do not match the axes,
// a row has no policies or other policies than the first row's; and for
// kHackbench when the axes are not exactly `groups` and `fds`.
absl::Status ValidateSweepReport(const v1::SweepReport& report,
                                 SweepLayout layout);

// BuildSweepTable is the table of `layout`. REQUIRES: ValidateSweepReport
// OK.
PolicyTable BuildSweepTable(const v1::SweepReport& report, SweepLayout layout);

// WriteSweepText writes a one-line summary and the table of `layout`.
// Returns ValidateSweepReport's errors, or DataLoss when the stream fails.
absl::Status WriteSweepText(const v1::SweepReport& report, SweepLayout layout,
                            std::ostream& out);

// WriteSweepCsv writes the kSweep table as CSV. Errors as WriteSweepText.
absl::Status WriteSweepCsv(const v1::SweepReport& report, std::ostream& out);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_SWEEP_REPORT_H_
