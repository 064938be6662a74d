// RunAbCommand: what `schedcache ab` and `schedcache demo` do once their
// flags are parsed: run the evaluation on the chosen backend, print the
// text report, write the requested files, and show progress.
//
// Thread contract: runs on the calling thread.
#ifndef SCHEDCACHE_EVAL_AB_AB_COMMAND_H_
#define SCHEDCACHE_EVAL_AB_AB_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "eval/ab/ab_runner.h"
#include "eval/ab/input_list.h"
#include "eval/ab/report_files.h"

namespace schedcache::ab {

struct AbCommand {
  AbOptions options;   // options.progress is set by RunAbCommand
  std::string server;  // empty: an in-process session
  ReportFiles files;
  bool progress = false;  // draw a progress line on `err`
  // inputs_file, when set, replaces options.input: every input of that list
  // (input_list.h) runs in a session of its own and the report is their
  // merge (ab_merge.h). With `shard`, only that share runs and files.json
  // receives its ShardResult (shard_result.h) for ab-merge; the table, CSV
  // and HTML show the share.
  std::string inputs_file;
  std::optional<ShardSpec> shard;
  std::string cpu_map;  // --cpu-map as typed, recorded in shard results
};

// RunAbCommand runs `command`, writing the report table to `out` and notes
// (files written, skipped list entries, warnings, progress) to `err`.
// Returns RunAb's errors (for a list, naming the list's file, line and
// entry), ReadInputList's, or the file writers'.
absl::Status RunAbCommand(const AbCommand& command, std::ostream& out,
                          std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_COMMAND_H_
