// RunSweepCommand: what `schedcache sweep`, and `schedcache ab` with lists
// of hackbench groups and fds, do once their flags are parsed: plan the
// sweep, run it, print its table, write the requested files, and show
// progress.
//
// Thread contract: called on one thread; the sweep runs on its own workers.
#ifndef SCHEDCACHE_EVAL_AB_SWEEP_COMMAND_H_
#define SCHEDCACHE_EVAL_AB_SWEEP_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "eval/ab/report_files.h"
#include "eval/ab/sweep.h"
#include "eval/report/sweep_report.h"

namespace schedcache::ab {

struct SweepCommand {
  AbOptions base;  // every combination starts from these
  std::vector<SweepAxis> axes;
  std::string input;  // --input as typed
  int jobs = 1;
  SweepLayout layout = SweepLayout::kSweep;
  ReportFiles files;
  bool progress = false;  // draw a progress line on `err`
};

// RunSweepCommand writes the table to `out`, and to `err` a line per failed
// combination (naming its values), the files written and the progress.
// Returns InvalidArgument, nothing run, when files.cache_groups_csv is set
// (a sweep has no one cache-group table), MakeSweepPlan's errors
// (InvalidArgument, nothing run), the report
// writers' errors, or, when some combination failed, Aborted naming the
// first failure's values and error, after printing the rest.
absl::Status RunSweepCommand(const SweepCommand& command, std::ostream& out,
                             std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_SWEEP_COMMAND_H_
