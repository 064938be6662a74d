// The input list of `schedcache ab --inputs-file LIST [--shard K/N]`: one
// input spec a line (trace:PATH, csv:PATH, workload:NAME), `#` starting a
// comment, blank lines ignored. Relative trace and csv paths are taken from
// the list file's folder, so a list and its traces move together (a
// Kubernetes ConfigMap beside a volume of traces).
//
// Sharding is round-robin over the list's entries: entry i (0-based, in file
// order, bad entries included so every shard numbers alike) belongs to shard
// i % N. K is 0-based, as Kubernetes' JOB_COMPLETION_INDEX.
//
// Thread contract: plain functions and values; thread-safe.
#ifndef SCHEDCACHE_EVAL_AB_INPUT_LIST_H_
#define SCHEDCACHE_EVAL_AB_INPUT_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/ab/ab_runner.h"

namespace schedcache::ab {

// InputListEntry is one input of the list.
struct InputListEntry {
  int index = 0;     // position among the list's entries, from 0
  int line = 0;      // line number in the file, from 1
  std::string text;  // the spec as written
  AbInputSpec spec;  // parsed, its path resolved against the list's folder
};

// InputList is a parsed list: the inputs that parse, and one message per
// entry that does not ("LIST:LINE: message"), which is skipped on its own.
struct InputList {
  std::vector<InputListEntry> inputs;
  std::vector<std::string> rejected;
  int entries = 0;  // inputs plus rejected
};

// ReadInputList reads the list at `path`. Returns NotFound or
// PermissionDenied naming the file when it cannot be read, InvalidArgument
// when no entry of it parses.
absl::StatusOr<InputList> ReadInputList(const std::string& path);

// ShardSpec is --shard K/N.
struct ShardSpec {
  int index = 0;
  int count = 1;
};

// kMaxShards bounds N: more shards than that is a typo, not a fleet.
inline constexpr int kMaxShards = 100000;

// ParseShard reads "K/N" with 0 <= K < N <= kMaxShards. Returns
// InvalidArgument naming the text and the rule it breaks.
absl::StatusOr<ShardSpec> ParseShard(absl::string_view text);

// InShard says whether list entry `index` belongs to `shard`.
bool InShard(int index, const ShardSpec& shard);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_INPUT_LIST_H_
