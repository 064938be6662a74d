// RunAbCommand: what `schedcache ab` and `schedcache demo` do once their
// flags are parsed: run the evaluation on the chosen backend, print the
// text report, write the requested files, and show progress.
//
// Thread contract: runs on the calling thread.
#ifndef SCHEDCACHE_EVAL_AB_AB_COMMAND_H_
#define SCHEDCACHE_EVAL_AB_AB_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/report_files.h"

namespace schedcache::ab {

struct AbCommand {
  AbOptions options;   // options.progress is set by RunAbCommand
  std::string server;  // empty: an in-process session
  ReportFiles files;
  bool progress = false;  // draw a progress line on `err`
};

// RunAbCommand runs `command`, writing the report table to `out` and notes
// (files written, warnings, progress) to `err`. Returns RunAb's errors or
// the file writers'.
absl::Status RunAbCommand(const AbCommand& command, std::ostream& out,
                          std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_COMMAND_H_
