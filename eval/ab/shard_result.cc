#include "eval/ab/shard_result.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "eval/report/json_report.h"
#include "nlohmann/json.hpp"

namespace schedcache::ab {
namespace {

// ordered_json keeps the keys in the order written, so an embedded report
// reads as `ab --json` wrote it.
using Json = nlohmann::ordered_json;

// Dump never throws: invalid UTF-8 (which our writer never produces) would
// be replaced rather than raise nlohmann's type_error.
std::string Dump(const Json& json, int indent = -1) {
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Node is one JSON value and its path from the document's root, so every
// error names the field as a reader would look it up.
class Node {
 public:
  Node(const Json& value, std::string path)
      : value_(value), path_(std::move(path)) {}

  const Json& value() const { return value_; }
  const std::string& path() const { return path_; }

  absl::StatusOr<Node> Field(absl::string_view key) const {
    if (!value_.is_object()) return Wrong("an object");
    const auto it = value_.find(std::string(key));
    if (it == value_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": the field \"", key, "\" is missing"));
    }
    return Node(
        *it, path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key));
  }
  absl::StatusOr<std::vector<Node>> Elements() const {
    if (!value_.is_array()) return Wrong("an array");
    std::vector<Node> elements;
    for (size_t i = 0; i < value_.size(); ++i) {
      elements.emplace_back(value_[i], absl::StrCat(path_, "[", i, "]"));
    }
    return elements;
  }
  absl::StatusOr<uint64_t> Uint() const {
    if (!value_.is_number_unsigned()) return Wrong("an unsigned integer");
    return value_.get<uint64_t>();
  }
  absl::StatusOr<int64_t> Int() const {
    if (value_.is_number_unsigned() &&
        value_.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Wrong("a 64-bit integer");
    }
    if (!value_.is_number_integer()) return Wrong("an integer");
    return value_.get<int64_t>();
  }
  absl::StatusOr<int> Int32() const {
    ASSIGN_OR_RETURN(const int64_t v, Int());
    if (v < INT32_MIN || v > INT32_MAX) return Wrong("a 32-bit integer");
    return static_cast<int>(v);
  }
  absl::StatusOr<double> Double() const {
    if (!value_.is_number()) return Wrong("a number");
    return value_.get<double>();
  }
  absl::StatusOr<std::string> String() const {
    if (!value_.is_string()) return Wrong("a string");
    return value_.get<std::string>();
  }
  // Read reads member `key` with `as`, e.g. Read("scans", &Node::Uint).
  template <typename T>
  absl::StatusOr<T> Read(absl::string_view key,
                         absl::StatusOr<T> (Node::*as)() const) const {
    ASSIGN_OR_RETURN(const Node field, Field(key));
    return (field.*as)();
  }
  // Llc reads an LLC id or null (no preferred LLC).
  absl::StatusOr<int> Llc() const {
    if (value_.is_null()) return kNoPreferredLlc;
    return Int32();
  }

 private:
  absl::Status Wrong(absl::string_view want) const {
    std::string got = Dump(value_);
    if (got.size() > 60) got = got.substr(0, 57) + "...";
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": want ", want, ", got ", got));
  }

  const Json& value_;
  std::string path_;
};

absl::StatusOr<std::vector<std::string>> Strings(const Node& node) {
  ASSIGN_OR_RETURN(const std::vector<Node> elements, node.Elements());
  std::vector<std::string> strings;
  for (const Node& e : elements) {
    ASSIGN_OR_RETURN(std::string s, e.String());
    strings.push_back(std::move(s));
  }
  return strings;
}

absl::StatusOr<AbInput> ReadInput(const Node& n) {
  AbInput in;
  ASSIGN_OR_RETURN(in.description, n.Read("description", &Node::String));
  ASSIGN_OR_RETURN(in.topology, n.Read("topology", &Node::String));
  ASSIGN_OR_RETURN(in.topology_source, n.Read("topologySource", &Node::String));
  ASSIGN_OR_RETURN(in.samples, n.Read("samples", &Node::Uint));
  ASSIGN_OR_RETURN(in.handovers, n.Read("handOvers", &Node::Uint));
  ASSIGN_OR_RETURN(in.malformed_lines, n.Read("malformedLines", &Node::Uint));
  ASSIGN_OR_RETURN(const Node examples, n.Field("malformedExamples"));
  ASSIGN_OR_RETURN(in.malformed_examples, Strings(examples));
  ASSIGN_OR_RETURN(in.start_ns, n.Read("startNs", &Node::Int));
  ASSIGN_OR_RETURN(in.duration_ns, n.Read("durationNs", &Node::Int));
  ASSIGN_OR_RETURN(in.hz, n.Read("hz", &Node::Int32));
  if (!n.value().contains("kernelDecisions")) return in;
  ASSIGN_OR_RETURN(in.kernel_decisions, n.Read("kernelDecisions", &Node::Uint));
  ASSIGN_OR_RETURN(in.kernel_decisions_unmatched,
                   n.Read("kernelDecisionsUnmatched", &Node::Uint));
  return in;
}

absl::StatusOr<Distribution> ReadDistribution(const Node& n) {
  Distribution d;
  ASSIGN_OR_RETURN(d.count, n.Read("count", &Node::Uint));
  ASSIGN_OR_RETURN(d.mean, n.Read("mean", &Node::Double));
  ASSIGN_OR_RETURN(d.p50, n.Read("p50", &Node::Int));
  ASSIGN_OR_RETURN(d.p99, n.Read("p99", &Node::Int));
  ASSIGN_OR_RETURN(d.max, n.Read("max", &Node::Int));
  return d;
}

absl::StatusOr<std::vector<HistogramBin>> ReadHistogram(const Node& n) {
  ASSIGN_OR_RETURN(const std::vector<Node> bins, n.Elements());
  std::vector<HistogramBin> histogram;
  for (const Node& bin : bins) {
    HistogramBin& out = histogram.emplace_back();
    ASSIGN_OR_RETURN(out.cpus_scanned, bin.Read("cpusScanned", &Node::Int));
    ASSIGN_OR_RETURN(out.scans, bin.Read("scans", &Node::Uint));
  }
  return histogram;
}

absl::StatusOr<PolicyResult> ReadPolicy(const Node& n) {
  PolicyResult policy;
  PolicyReport& r = policy.report;
  ASSIGN_OR_RETURN(r.name, n.Read("name", &Node::String));
  ASSIGN_OR_RETURN(r.scans, n.Read("scans", &Node::Uint));
  ASSIGN_OR_RETURN(r.scans_skipped, n.Read("scansSkipped", &Node::Uint));
  ASSIGN_OR_RETURN(r.scans_skipped_disabled,
                   n.Read("scansSkippedDisabled", &Node::Uint));
  ASSIGN_OR_RETURN(r.scans_aborted, n.Read("scansAborted", &Node::Uint));
  for (auto [key, field] : {std::pair{"cpusScanned", &r.cpus_scanned},
                            std::pair{"llcsScanned", &r.llcs_scanned},
                            std::pair{"scanNs", &r.scan_ns}}) {
    ASSIGN_OR_RETURN(const Node d, n.Field(key));
    ASSIGN_OR_RETURN(*field, ReadDistribution(d));
  }
  ASSIGN_OR_RETURN(r.decisions, n.Read("decisions", &Node::Uint));
  ASSIGN_OR_RETURN(r.agreements, n.Read("agreements", &Node::Uint));
  ASSIGN_OR_RETURN(const Node agreement, n.Field("agreement"));
  if (!agreement.value().is_null()) {
    ASSIGN_OR_RETURN(r.agreement, agreement.Double());
  }
  ASSIGN_OR_RETURN(r.preferred_llc_changes,
                   n.Read("preferredLlcChanges", &Node::Uint));
  ASSIGN_OR_RETURN(r.runtime_on_preferred_llc,
                   n.Read("runtimeOnPreferredLlc", &Node::Double));
  ASSIGN_OR_RETURN(const Node histogram, n.Field("cpusScannedHistogram"));
  ASSIGN_OR_RETURN(policy.cpus_scanned_histogram, ReadHistogram(histogram));
  if (!n.value().contains("kernelDecisions")) return policy;
  ASSIGN_OR_RETURN(r.kernel_decisions, n.Read("kernelDecisions", &Node::Uint));
  ASSIGN_OR_RETURN(r.kernel_scans, n.Read("kernelScans", &Node::Uint));
  ASSIGN_OR_RETURN(r.kernel_agreements,
                   n.Read("kernelAgreements", &Node::Uint));
  ASSIGN_OR_RETURN(const Node kernel_agreement, n.Field("kernelAgreement"));
  if (!kernel_agreement.value().is_null()) {
    ASSIGN_OR_RETURN(r.kernel_agreement, kernel_agreement.Double());
  }
  ASSIGN_OR_RETURN(r.kernel_process_scans,
                   n.Read("kernelProcessScans", &Node::Uint));
  return policy;
}

absl::StatusOr<std::vector<LlcChange>> ReadTimeline(const Node& n) {
  ASSIGN_OR_RETURN(const std::vector<Node> points, n.Elements());
  std::vector<LlcChange> changes;
  for (const Node& point : points) {
    LlcChange& change = changes.emplace_back();
    ASSIGN_OR_RETURN(change.timestamp_ns,
                     point.Read("timestampNs", &Node::Int));
    ASSIGN_OR_RETURN(change.llc, point.Read("llc", &Node::Llc));
  }
  return changes;
}

// ReadProcess reads one process; its per-policy values are keyed by the
// policy names of the result, in the result's order.
absl::StatusOr<ProcessResult> ReadProcess(
    const Node& n, const std::vector<PolicyResult>& policies) {
  ProcessResult p;
  ASSIGN_OR_RETURN(p.tgid, n.Read("tgid", &Node::Int32));
  ASSIGN_OR_RETURN(p.comm, n.Read("comm", &Node::String));
  ASSIGN_OR_RETURN(p.runtime_ns, n.Read("runtimeNs", &Node::Int));
  ASSIGN_OR_RETURN(const Node preferred, n.Field("preferredLlc"));
  for (const PolicyResult& policy : policies) {
    ASSIGN_OR_RETURN(const int llc,
                     preferred.Read(policy.report.name, &Node::Llc));
    p.final_preferred_llc.push_back(llc);
  }
  if (n.value().contains("kernel")) {
    ASSIGN_OR_RETURN(const Node kernel, n.Field("kernel"));
    for (const PolicyResult& policy : policies) {
      ASSIGN_OR_RETURN(const Node counts, kernel.Field(policy.report.name));
      KernelProcessCounts& c = p.kernel.emplace_back();
      ASSIGN_OR_RETURN(c.kernel_scans, counts.Read("kernelScans", &Node::Uint));
      ASSIGN_OR_RETURN(c.scans, counts.Read("scans", &Node::Uint));
      ASSIGN_OR_RETURN(c.agreements, counts.Read("agreements", &Node::Uint));
    }
  }
  if (!n.value().contains("preferredLlcOverTime")) return p;
  ASSIGN_OR_RETURN(const Node over_time, n.Field("preferredLlcOverTime"));
  for (const PolicyResult& policy : policies) {
    ASSIGN_OR_RETURN(const Node timeline, over_time.Field(policy.report.name));
    ASSIGN_OR_RETURN(std::vector<LlcChange> changes, ReadTimeline(timeline));
    p.preferred_llc_over_time.push_back(std::move(changes));
  }
  return p;
}

absl::StatusOr<AbResult> ReadAbResult(const Node& n) {
  AbResult result;
  ASSIGN_OR_RETURN(const Node input, n.Field("input"));
  ASSIGN_OR_RETURN(result.input, ReadInput(input));
  ASSIGN_OR_RETURN(const Node policies, n.Field("policies"));
  ASSIGN_OR_RETURN(const std::vector<Node> policy_nodes, policies.Elements());
  for (const Node& policy : policy_nodes) {
    ASSIGN_OR_RETURN(PolicyResult p, ReadPolicy(policy));
    result.policies.push_back(std::move(p));
  }
  ASSIGN_OR_RETURN(const Node processes, n.Field("processes"));
  ASSIGN_OR_RETURN(const std::vector<Node> process_nodes, processes.Elements());
  for (const Node& process : process_nodes) {
    ASSIGN_OR_RETURN(ProcessResult p, ReadProcess(process, result.policies));
    result.processes.push_back(std::move(p));
  }
  return result;
}

absl::StatusOr<ShardConfig> ReadConfig(const Node& n) {
  ShardConfig c;
  ASSIGN_OR_RETURN(c.topology, n.Read("topology", &Node::String));
  ASSIGN_OR_RETURN(const Node policies, n.Field("policies"));
  ASSIGN_OR_RETURN(c.policies, Strings(policies));
  ASSIGN_OR_RETURN(c.trigger, n.Read("trigger", &Node::String));
  ASSIGN_OR_RETURN(const Node settings, n.Field("settings"));
  ASSIGN_OR_RETURN(c.settings, Strings(settings));
  ASSIGN_OR_RETURN(c.hz, n.Read("hz", &Node::Int32));
  ASSIGN_OR_RETURN(c.cpu_map, n.Read("cpuMap", &Node::String));
  ASSIGN_OR_RETURN(c.workload, n.Read("workload", &Node::String));
  return c;
}

absl::StatusOr<ShardResult> ReadDocument(const Node& root) {
  ASSIGN_OR_RETURN(const std::string schema,
                   root.Read("schema", &Node::String));
  if (schema != kShardSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema: \"", schema, "\" is not \"", kShardSchema,
                     "\" (a file of `schedcache ab --shard`?)"));
  }
  ShardResult shard;
  ASSIGN_OR_RETURN(const Node spec, root.Field("shard"));
  ASSIGN_OR_RETURN(shard.shard.index, spec.Read("index", &Node::Int32));
  ASSIGN_OR_RETURN(shard.shard.count, spec.Read("count", &Node::Int32));
  ASSIGN_OR_RETURN(const Node config, root.Field("config"));
  ASSIGN_OR_RETURN(shard.config, ReadConfig(config));
  ASSIGN_OR_RETURN(shard.entries, root.Read("entries", &Node::Int32));
  ASSIGN_OR_RETURN(const Node inputs, root.Field("inputs"));
  ASSIGN_OR_RETURN(const std::vector<Node> input_nodes, inputs.Elements());
  for (const Node& input : input_nodes) {
    ShardInput& out = shard.inputs.emplace_back();
    ASSIGN_OR_RETURN(out.index, input.Read("index", &Node::Int32));
    ASSIGN_OR_RETURN(out.input, input.Read("input", &Node::String));
  }
  ASSIGN_OR_RETURN(const Node results, root.Field("results"));
  ASSIGN_OR_RETURN(const std::vector<Node> result_nodes, results.Elements());
  for (const Node& result : result_nodes) {
    ASSIGN_OR_RETURN(const int index, result.Read("index", &Node::Int32));
    ASSIGN_OR_RETURN(const Node report, result.Field("report"));
    ASSIGN_OR_RETURN(AbResult r, ReadAbResult(report));
    shard.results.emplace_back(index, std::move(r));
  }
  return shard;
}

Json ConfigJson(const ShardConfig& c) {
  return Json{{"topology", c.topology},
              {"policies", c.policies},
              {"trigger", c.trigger},
              {"settings", c.settings},
              {"hz", c.hz},
              {"cpuMap", c.cpu_map},
              {"workload", c.workload}};
}

}  // namespace

absl::Status WriteShardResult(const ShardResult& shard,
                              const std::string& path) {
  Json doc = {
      {"schema", kShardSchema},
      {"shard", {{"index", shard.shard.index}, {"count", shard.shard.count}}},
      {"config", ConfigJson(shard.config)},
      {"entries", shard.entries},
      {"inputs", Json::array()},
      {"results", Json::array()}};
  for (const ShardInput& input : shard.inputs) {
    doc["inputs"].push_back({{"index", input.index}, {"input", input.input}});
  }
  for (const auto& [index, result] : shard.results) {
    // The `ab --json` object itself, so a shard holds exactly what an
    // unsharded run would have written for that input.
    std::ostringstream report;
    RETURN_IF_ERROR(WriteJson(result, report));
    doc["results"].push_back(
        {{"index", index},
         {"report", Json::parse(report.str(), nullptr, false)}});
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    const std::string message =
        absl::StrCat("cannot create ", path, ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message)
                           : absl::NotFoundError(message);
  }
  out << Dump(doc, 1) << "\n";
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<ShardResult> ReadShardResult(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    const std::string message =
        absl::StrCat("cannot read ", path, ": ", std::strerror(error));
    return error == EACCES ? absl::PermissionDeniedError(message)
                           : absl::NotFoundError(message);
  }
  std::stringstream text;
  text << in.rdbuf();
  const Json doc = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": not valid JSON (a file of `schedcache ab "
                     "--shard K/N --json FILE`?)"));
  }
  absl::StatusOr<ShardResult> shard = ReadDocument(Node(doc, ""));
  if (!shard.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", shard.status().message()));
  }
  return shard;
}

}  // namespace schedcache::ab
