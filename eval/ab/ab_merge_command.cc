#include "eval/ab/ab_merge_command.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "eval/ab/ab_merge.h"
#include "eval/ab/shard_result.h"

namespace schedcache::ab {
namespace {

// Shard is one file read, with its name for the messages.
struct Shard {
  std::string path;
  ShardResult result;
};

absl::Status Mismatch(const Shard& shard, absl::string_view field,
                      const std::string& got, const Shard& first,
                      const std::string& want) {
  return absl::InvalidArgumentError(
      absl::StrCat(shard.path, ": ", field, " is \"", got, "\" but ",
                   first.path, " has \"", want, "\": not shards of one run"));
}

// CheckSameRun compares the fields every shard of one run shares.
absl::Status CheckSameRun(const Shard& first, const Shard& shard) {
  const ShardConfig& a = first.result.config;
  const ShardConfig& b = shard.result.config;
  const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
      {"config.topology", {a.topology, b.topology}},
      {"config.policies",
       {absl::StrJoin(a.policies, ","), absl::StrJoin(b.policies, ",")}},
      {"config.trigger", {a.trigger, b.trigger}},
      {"config.settings",
       {absl::StrJoin(a.settings, " "), absl::StrJoin(b.settings, " ")}},
      {"config.hz", {absl::StrCat(a.hz), absl::StrCat(b.hz)}},
      {"config.cpuMap", {a.cpu_map, b.cpu_map}},
      {"config.workload", {a.workload, b.workload}},
      {"shard.count",
       {absl::StrCat(first.result.shard.count),
        absl::StrCat(shard.result.shard.count)}},
      {"entries",
       {absl::StrCat(first.result.entries),
        absl::StrCat(shard.result.entries)}},
  };
  for (const auto& [field, values] : fields) {
    if (values.first != values.second) {
      return Mismatch(shard, field, values.second, first, values.first);
    }
  }
  const std::vector<ShardInput>& want = first.result.inputs;
  const std::vector<ShardInput>& got = shard.result.inputs;
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    auto text = [i](const std::vector<ShardInput>& inputs) {
      return i < inputs.size()
                 ? absl::StrCat(inputs[i].index, " ", inputs[i].input)
                 : std::string("(none)");
    };
    if (text(want) != text(got)) {
      return Mismatch(shard, absl::StrCat("inputs[", i, "]"), text(got), first,
                      text(want));
    }
  }
  return absl::OkStatus();
}

// CheckCoverage checks that `shard` holds one result for each list input
// of its share, and none of another share.
absl::Status CheckCoverage(const Shard& shard) {
  const ShardResult& r = shard.result;
  const std::string name =
      absl::StrCat("shard ", r.shard.index, "/", r.shard.count);
  std::map<int, int> results_of;  // input index -> results
  for (size_t i = 0; i < r.results.size(); ++i) {
    const int index = r.results[i].first;
    if (!InShard(index, r.shard)) {
      return absl::InvalidArgumentError(
          absl::StrCat(shard.path, ": results[", i, "].index ", index,
                       " is not an input of ", name));
    }
    ++results_of[index];
  }
  for (const ShardInput& input : r.inputs) {
    if (!InShard(input.index, r.shard)) continue;
    const int count = results_of[input.index];
    if (count != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(shard.path, ": input ", input.index, " (", input.input,
                       ") of ", name, " has ", count, " results, want 1"));
    }
    results_of.erase(input.index);
  }
  if (!results_of.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(shard.path, ": result for input ",
                     results_of.begin()->first, ", which is not in inputs"));
  }
  return absl::OkStatus();
}

// CheckShardSet checks that the files are shards 0..N-1, each once.
absl::Status CheckShardSet(const std::vector<Shard>& shards) {
  const int count = shards[0].result.shard.count;
  std::map<int, const Shard*> by_index;
  for (const Shard& shard : shards) {
    const int index = shard.result.shard.index;
    if (index < 0 || index >= count) {
      return absl::InvalidArgumentError(absl::StrCat(
          shard.path, ": shard.index ", index, " is outside 0..", count - 1));
    }
    auto [it, inserted] = by_index.emplace(index, &shard);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(shard.path, " and ", it->second->path,
                       " are both shard ", index, "/", count));
    }
  }
  for (int index = 0; index < count; ++index) {
    if (!by_index.contains(index)) {
      return absl::InvalidArgumentError(
          absl::StrCat("shard ", index, "/", count, " is missing: got ",
                       shards.size(), " of ", count, " shard files"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunAbMergeCommand(const std::vector<std::string>& paths,
                               const ReportFiles& files, std::ostream& out,
                               std::ostream& err) {
  if (paths.empty()) {
    return absl::InvalidArgumentError("no shard result files given");
  }
  std::vector<Shard> shards;
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(ShardResult result, ReadShardResult(path));
    shards.push_back(Shard{path, std::move(result)});
  }
  for (const Shard& shard : shards) {
    RETURN_IF_ERROR(CheckSameRun(shards[0], shard));
    RETURN_IF_ERROR(CheckCoverage(shard));
  }
  RETURN_IF_ERROR(CheckShardSet(shards));
  std::map<int, AbResult*> in_list_order;
  for (Shard& shard : shards) {
    for (auto& [index, result] : shard.result.results) {
      in_list_order[index] = &result;
    }
  }
  std::vector<AbResult> parts;
  for (auto& [index, result] : in_list_order)
    parts.push_back(std::move(*result));
  ASSIGN_OR_RETURN(const AbResult merged, MergeAbResults(std::move(parts)));
  return PublishReport(merged, files, out, err);
}

}  // namespace schedcache::ab
