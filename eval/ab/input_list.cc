#include "eval/ab/input_list.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace schedcache::ab {
namespace {

// Resolve takes a relative recorded-input path from the list's folder;
// "-" (standard input) means nothing in a list shared by many shards.
absl::Status Resolve(const std::filesystem::path& folder, AbInputSpec& spec) {
  if (spec.kind == AbInputSpec::Kind::kWorkload) return absl::OkStatus();
  if (spec.path == "-") {
    return absl::InvalidArgumentError(
        "standard input (-) cannot be an entry of an input list");
  }
  const std::filesystem::path path(spec.path);
  if (path.is_relative())
    spec.path = (folder / path).lexically_normal().string();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InputList> ReadInputList(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int error = errno;
    const std::string message = absl::StrCat("cannot read input list ", path,
                                             ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message)
                           : absl::NotFoundError(message);
  }
  const std::filesystem::path folder =
      std::filesystem::path(path).parent_path();
  InputList list;
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const absl::string_view text = absl::StripAsciiWhitespace(
        absl::string_view(raw).substr(0, raw.find('#')));
    if (text.empty()) continue;
    const int index = list.entries++;
    absl::StatusOr<AbInputSpec> spec = ParseAbInput(text);
    absl::Status status = spec.status();
    if (status.ok()) status = Resolve(folder, *spec);
    if (!status.ok()) {
      list.rejected.push_back(absl::StrCat(path, ":", line, ": \"", text,
                                           "\": ", status.message()));
      continue;
    }
    list.inputs.push_back(
        InputListEntry{index, line, std::string(text), *std::move(spec)});
  }
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat("cannot read input list ", path));
  }
  if (list.inputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input list ", path, " has no usable input (", list.rejected.size(),
        " rejected): one trace:PATH, csv:PATH or workload:NAME a line"));
  }
  return list;
}

absl::StatusOr<ShardSpec> ParseShard(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  ShardSpec shard;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &shard.index) ||
      !absl::SimpleAtoi(parts[1], &shard.count)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard ", text, ": want K/N, e.g. 0/4"));
  }
  if (shard.count < 1 || shard.count > kMaxShards) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard ", text, ": N must be in 1..", kMaxShards));
  }
  if (shard.index < 0 || shard.index >= shard.count) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shard ", text, ": K must be in 0..", shard.count - 1,
                     " (0-based, as Kubernetes' JOB_COMPLETION_INDEX)"));
  }
  return shard;
}

bool InShard(int index, const ShardSpec& shard) {
  return index % shard.count == shard.index;
}

}  // namespace schedcache::ab
