#include "eval/ab/shard_result.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/proto_json.h"
#include "common/status_macros.h"
#include "eval/ab/ab_report.h"
#include "eval/report/policy_table.h"
#include "google/protobuf/struct.pb.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::ab {
namespace {

// FileError is the status of a file that cannot be opened, naming it.
absl::Status FileError(absl::string_view what, const std::string& path) {
  const int error = errno;
  const std::string message =
      absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(error));
  return error == EACCES ? absl::PermissionDeniedError(message)
                         : absl::NotFoundError(message);
}

// CheckSchema reads only the "schema" key of `json`, so that a file of
// another version is refused for its version, whatever else changed in it.
absl::Status CheckSchema(const std::string& json) {
  google::protobuf::Struct document;
  if (const absl::Status parsed = MessageFromJson(json, document);
      !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not valid JSON (a file of `schedcache ab --shard K/N --json FILE`?): ",
        parsed.message()));
  }
  const auto schema = document.fields().find("schema");
  const std::string found =
      schema == document.fields().end() ? "" : schema->second.string_value();
  if (found == kShardSchema) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "schema \"", found, "\" is not \"", kShardSchema,
      "\", the version this schedcache reads (a file of `schedcache ab "
      "--shard K/N --json FILE` of this version?)"));
}

v1::AbShard ShardToProto(const ShardResult& shard) {
  v1::AbShard out;
  out.set_schema(kShardSchema);
  out.set_index(shard.shard.index);
  out.set_count(shard.shard.count);
  v1::AbShardConfig& c = *out.mutable_config();
  c.set_topology(shard.config.topology);
  for (const std::string& policy : shard.config.policies) {
    c.add_policies(policy);
  }
  c.set_trigger(shard.config.trigger);
  for (const std::string& setting : shard.config.settings) {
    c.add_settings(setting);
  }
  c.set_hz(shard.config.hz);
  c.set_cpu_map(shard.config.cpu_map);
  c.set_workload(shard.config.workload);
  out.set_entries(shard.entries);
  for (const ShardInput& input : shard.inputs) {
    v1::AbShardInput& i = *out.add_inputs();
    i.set_index(input.index);
    i.set_input(input.input);
  }
  for (const auto& [index, result] : shard.results) {
    v1::AbShardResult& r = *out.add_results();
    r.set_index(index);
    *r.mutable_report() = AbResultToProto(result);
  }
  return out;
}

absl::StatusOr<ShardResult> ShardFromProto(const v1::AbShard& shard) {
  ShardResult out;
  out.shard = {shard.index(), shard.count()};
  const v1::AbShardConfig& c = shard.config();
  out.config = {.topology = c.topology(),
                .policies = {c.policies().begin(), c.policies().end()},
                .trigger = c.trigger(),
                .settings = {c.settings().begin(), c.settings().end()},
                .hz = c.hz(),
                .cpu_map = c.cpu_map(),
                .workload = c.workload()};
  out.entries = shard.entries();
  for (const v1::AbShardInput& input : shard.inputs()) {
    out.inputs.push_back({input.index(), input.input()});
  }
  for (int i = 0; i < shard.results_size(); ++i) {
    absl::StatusOr<AbResult> result =
        AbResultFromProto(shard.results(i).report());
    if (!result.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "results[", i, "].report: ", result.status().message()));
    }
    out.results.emplace_back(shard.results(i).index(), *std::move(result));
  }
  return out;
}

}  // namespace

absl::Status WriteShardResult(const ShardResult& shard,
                              const std::string& path) {
  const v1::AbShard message = ShardToProto(shard);
  for (const v1::AbShardResult& result : message.results()) {
    RETURN_IF_ERROR(ValidateAbReport(result.report()));
  }
  ASSIGN_OR_RETURN(const std::string json, MessageToJson(message));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return FileError("create", path);
  out << json << "\n";
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<ShardResult> ReadShardResult(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileError("read", path);
  std::stringstream text;
  text << in.rdbuf();
  absl::Status checked = CheckSchema(text.str());
  v1::AbShard shard;
  if (checked.ok()) checked = MessageFromJson(text.str(), shard);
  absl::StatusOr<ShardResult> read =
      checked.ok() ? ShardFromProto(shard) : absl::StatusOr<ShardResult>(checked);
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", read.status().message()));
  }
  return read;
}

}  // namespace schedcache::ab
