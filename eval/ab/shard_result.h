// ShardResult: what `schedcache ab --inputs-file LIST --shard K/N --json
// FILE` writes and `schedcache ab-merge` reads: the configuration the shard
// ran with, the list's inputs, and the full result of each input of its
// share. Per-input results, not the share's merged summary, so that merging
// N shards goes through the same MergeAbResults, over the same values, as
// one unsharded run (percentiles of summaries do not add up).
//
// The file is a schedcache.v1.AbShard message (proto/schedcache/v1/
// ab_report.proto) in protobuf's JSON mapping (api/proto_json.h), on one
// line: schema "schedcache-ab-shard/2", index, count, config, entries,
// inputs and results, each result's report the message `ab --json`
// writes, so a shard holds exactly what an unsharded run would have
// written for that input.
//
// Thread contract: plain values and functions; thread-safe.
#ifndef SCHEDCACHE_EVAL_AB_SHARD_RESULT_H_
#define SCHEDCACHE_EVAL_AB_SHARD_RESULT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/ab/ab_result.h"
#include "eval/ab/input_list.h"

namespace schedcache::ab {

// kShardSchema is the version this build writes and the only one it reads;
// /1 was the JSON of the hand-written writer, before AbShard.
inline constexpr char kShardSchema[] = "schedcache-ab-shard/2";

// ShardConfig is what must be equal across the shards of one run.
struct ShardConfig {
  std::string topology;
  std::vector<std::string> policies;
  std::string trigger;
  std::vector<std::string> settings;
  int hz = 0;
  std::string cpu_map;   // --cpu-map as typed
  std::string workload;  // the workload generator's flags, one string
};

struct ShardInput {
  int index = 0;
  std::string input;
};

struct ShardResult {
  ShardSpec shard;
  ShardConfig config;
  int entries = 0;
  std::vector<ShardInput> inputs;
  std::vector<std::pair<int, AbResult>> results;  // list index, result
};

// WriteShardResult writes `shard` to `path`. Returns the file's errors
// naming it, or InvalidArgument when a result is malformed
// (ValidateAbReport of its message).
absl::Status WriteShardResult(const ShardResult& shard,
                              const std::string& path);

// ReadShardResult reads a file WriteShardResult wrote. Returns NotFound or
// PermissionDenied when it cannot be read; InvalidArgument naming the file
// and both versions when its schema is not kShardSchema; InvalidArgument
// naming the file, the field's path (e.g. results[2].report.policies[0].
// report.scans, protobuf's account) and the value when it is not JSON of
// an AbShard, or a report is malformed (AbResultFromProto).
absl::StatusOr<ShardResult> ReadShardResult(const std::string& path);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_SHARD_RESULT_H_
