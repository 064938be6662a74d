// RunAbMergeCommand: what `schedcache ab-merge` does once its flags are
// parsed: read the shard results of one `ab --inputs-file LIST --shard K/N`
// run, check they are its N shards, and print and write their merged report,
// equal to what one unsharded `ab --inputs-file LIST` prints and writes.
//
// Thread contract: runs on the calling thread.
#ifndef SCHEDCACHE_EVAL_AB_AB_MERGE_COMMAND_H_
#define SCHEDCACHE_EVAL_AB_AB_MERGE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "eval/ab/report_files.h"

namespace schedcache::ab {

// RunAbMergeCommand merges the shard results in `paths`, writing the table
// to `out` and the files written to `err`. Returns ReadShardResult's
// errors; InvalidArgument naming the file and the field when the files are
// not the N shards of one run (a config field, the shard count or the input
// list differs from the first file's, a shard comes twice or is missing, a
// result lies outside its shard or an input of a shard has no result); or
// MergeAbResults' and the writers' errors.
absl::Status RunAbMergeCommand(const std::vector<std::string>& paths,
                               const ReportFiles& files, std::ostream& out,
                               std::ostream& err);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_MERGE_COMMAND_H_
