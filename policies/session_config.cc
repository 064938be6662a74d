#include "policies/session_config.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/message_text.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

constexpr size_t kMaxSessionNameLength = 64;
// Longer than any number or value name; ParseTunableValue echoes the text.
constexpr size_t kMaxTunableValueLength = 64;
// The spec and xml_name become Topology::source(), which every rejected
// sample's message repeats. hwloc's own synthetic exports of large machines
// are a few hundred bytes.
constexpr size_t kMaxTopologySpecLength = 4096;
constexpr size_t kMaxXmlNameLength = 256;
constexpr absl::string_view kSyntheticPrefix = "synthetic:";

const TunableSpec* FindSpec(const std::vector<TunableSpec>& specs,
                            absl::string_view name) {
  for (const TunableSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

TopologyLimits TopologyLimitsOf(int64_t max_cpus) {
  TopologyLimits limits;
  limits.max_cpus = max_cpus;
  limits.how_to_raise = "flag --max_topology_cpus";
  return limits;
}

// PolicySlot pairs a session's policy with its factory's specs.
struct PolicySlot {
  PolicyChoice* choice;
  std::vector<TunableSpec> specs;
};

// ParseValue parses a tunable's value, refusing first what is too long to
// be one (the parser's message would echo all of it).
absl::StatusOr<int64_t> ParseValue(const TunableSpec& spec,
                                   absl::string_view value) {
  if (value.size() > kMaxTunableValueLength) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tunables: the value of ", spec.name, ", ", QuoteForMessage(value),
        ", is longer than ", kMaxTunableValueLength, " bytes"));
  }
  return ParseTunableValue(spec, value);
}

absl::Status SetPolicyTunable(PolicySlot& slot, const TunableSpec& spec,
                              absl::string_view value) {
  ASSIGN_OR_RETURN(const int64_t parsed, ParseValue(spec, value));
  slot.choice->tunables[spec.name] = parsed;
  return absl::OkStatus();
}

// ApplySetting resolves one setting's name: "POLICY.NAME", a model tunable,
// or a policy tunable of every policy that declares it.
absl::Status ApplySetting(const v1::TunableSetting& setting,
                          std::vector<PolicySlot>& slots,
                          TunableValues& model_values) {
  const std::string& name = setting.name();
  if (const size_t dot = name.find('.'); dot != std::string::npos) {
    const absl::string_view policy = absl::string_view(name).substr(0, dot);
    const absl::string_view tunable = absl::string_view(name).substr(dot + 1);
    for (PolicySlot& slot : slots) {
      if (slot.choice->name != policy) continue;
      const TunableSpec* spec = FindSpec(slot.specs, tunable);
      if (spec == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("tunables: policy \"", policy, "\" has no tunable ",
                         QuoteForMessage(tunable)));
      }
      return SetPolicyTunable(slot, *spec, setting.value());
    }
    return absl::InvalidArgumentError(
        absl::StrCat("tunables: ", QuoteForMessage(name), " names policy ",
                     QuoteForMessage(policy),
                     ", which is not one of this session's policies"));
  }
  if (const TunableSpec* spec = FindSpec(ModelTunables::Specs(), name)) {
    ASSIGN_OR_RETURN(model_values[name], ParseValue(*spec, setting.value()));
    return absl::OkStatus();
  }
  bool found = false;
  for (PolicySlot& slot : slots) {
    if (const TunableSpec* spec = FindSpec(slot.specs, name)) {
      RETURN_IF_ERROR(SetPolicyTunable(slot, *spec, setting.value()));
      found = true;
    }
  }
  if (!found) {
    if (absl::Status retired = RetiredModelTunable(name); !retired.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tunables: ", retired.message()));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "tunables: ", QuoteForMessage(name),
        " is neither a model tunable nor a tunable of this session's "
        "policies (see ListPolicies)"));
  }
  return absl::OkStatus();
}

}  // namespace

ScanTrigger ScanTriggerFromProto(v1::ScanTrigger trigger) {
  return trigger == v1::SCAN_TRIGGER_QUERY ? ScanTrigger::kQuery
                                           : ScanTrigger::kTick;
}

v1::ScanTrigger ScanTriggerToProto(ScanTrigger trigger) {
  return trigger == ScanTrigger::kQuery ? v1::SCAN_TRIGGER_QUERY
                                        : v1::SCAN_TRIGGER_TICK;
}

absl::Status ValidateSessionName(absl::string_view name) {
  const bool valid_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
  });
  if (name.empty() || name.size() > kMaxSessionNameLength || !valid_chars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: ", QuoteForMessage(name),
        " is not a session name (1 to 64 characters of [A-Za-z0-9_.-])"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SessionSettings> BuildSessionSettings(
    const v1::CreateSessionRequest& request, const PolicyRegistry& registry,
    int64_t max_processes) {
  RETURN_IF_ERROR(ValidateSessionName(request.name()));
  SessionSettings settings;
  settings.name = request.name();
  if (request.policies().empty()) {
    return absl::InvalidArgumentError(
        "policies: at least one policy is required (the first is the "
        "reference)");
  }
  absl::flat_hash_set<std::string> seen;
  for (const std::string& name : request.policies()) {
    if (registry.Find(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("policies: unknown policy ", QuoteForMessage(name),
                       " (see ListPolicies)"));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("policies: \"", name, "\" is listed twice"));
    }
    settings.policies.push_back(PolicyChoice{name, {}});
  }
  std::vector<PolicySlot> slots;
  for (PolicyChoice& choice : settings.policies) {
    slots.push_back(
        PolicySlot{&choice, registry.Find(choice.name)->tunables()});
  }
  TunableValues model_values;
  for (const v1::TunableSetting& setting : request.tunables()) {
    RETURN_IF_ERROR(ApplySetting(setting, slots, model_values));
  }
  ASSIGN_OR_RETURN(settings.options.model,
                   ModelTunables::FromValues(model_values));
  if (request.trigger() != v1::SCAN_TRIGGER_UNSPECIFIED &&
      request.trigger() != v1::SCAN_TRIGGER_TICK &&
      request.trigger() != v1::SCAN_TRIGGER_QUERY) {
    return absl::InvalidArgumentError(
        absl::StrCat("trigger: unknown value ", request.trigger()));
  }
  settings.options.trigger = ScanTriggerFromProto(request.trigger());
  settings.options.max_processes = max_processes;
  return settings;
}

absl::Status CheckTopologySource(const v1::TopologySource& source,
                                 int64_t max_cpus) {
  switch (source.source_case()) {
    case v1::TopologySource::SOURCE_NOT_SET:
      return absl::OkStatus();
    case v1::TopologySource::kXml:
      if (source.xml_name().size() > kMaxXmlNameLength) {
        return absl::InvalidArgumentError(absl::StrCat(
            "topology.xml_name: ", QuoteForMessage(source.xml_name()),
            " is longer than ", kMaxXmlNameLength, " bytes"));
      }
      return absl::OkStatus();
    case v1::TopologySource::kSpec:
      break;
  }
  const std::string& spec = source.spec();
  if (spec == kHostSource) return absl::OkStatus();
  if (!absl::StartsWith(spec, kSyntheticPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology.spec: ", QuoteForMessage(spec),
        " is neither \"host\" nor \"synthetic:...\"; send an XML file's "
        "bytes in topology.xml"));
  }
  if (spec.size() > kMaxTopologySpecLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology.spec: ", QuoteForMessage(spec),
                     " is longer than ", kMaxTopologySpecLength, " bytes"));
  }
  return CheckSyntheticSource(spec, TopologyLimitsOf(max_cpus));
}

absl::StatusOr<std::shared_ptr<const Topology>> LoadSessionTopology(
    const v1::TopologySource& source, std::shared_ptr<const Topology> host,
    int64_t max_cpus) {
  const TopologyLimits limits = TopologyLimitsOf(max_cpus);
  absl::StatusOr<Topology> topology;
  switch (source.source_case()) {
    case v1::TopologySource::SOURCE_NOT_SET:
      return host;
    case v1::TopologySource::kXml:
      topology = LoadTopologyFromXml(
          source.xml(),
          source.xml_name().empty() ? "uploaded.xml" : source.xml_name(),
          limits);
      break;
    case v1::TopologySource::kSpec:
      if (source.spec() == kHostSource) return host;
      topology = LoadTopology(source.spec(), limits);
      break;
  }
  if (!topology.ok()) return topology.status();
  return std::make_shared<const Topology>(*std::move(topology));
}

}  // namespace schedcache
