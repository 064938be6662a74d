#include "server/session_config.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/proto_convert.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

constexpr size_t kMaxSessionNameLength = 64;

const TunableSpec* FindSpec(const std::vector<TunableSpec>& specs,
                            absl::string_view name) {
  for (const TunableSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// PolicySlot pairs a session's policy with its factory's specs.
struct PolicySlot {
  PolicyChoice* choice;
  std::vector<TunableSpec> specs;
};

absl::Status SetPolicyTunable(PolicySlot& slot, const TunableSpec& spec,
                              absl::string_view value) {
  ASSIGN_OR_RETURN(const int64_t parsed, ParseTunableValue(spec, value));
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
        return absl::InvalidArgumentError(absl::StrCat(
            "tunables: policy \"", policy, "\" has no tunable \"", tunable,
            "\""));
      }
      return SetPolicyTunable(slot, *spec, setting.value());
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "tunables: \"", name, "\" names policy \"", policy,
        "\", which is not one of this session's policies"));
  }
  if (const TunableSpec* spec = FindSpec(ModelTunables::Specs(), name)) {
    ASSIGN_OR_RETURN(model_values[name],
                     ParseTunableValue(*spec, setting.value()));
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
    return absl::InvalidArgumentError(absl::StrCat(
        "tunables: \"", name,
        "\" is neither a model tunable nor a tunable of this session's "
        "policies (see ListPolicies)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSessionName(absl::string_view name) {
  const bool valid_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
  });
  if (name.empty() || name.size() > kMaxSessionNameLength || !valid_chars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: \"", name,
        "\" is not a session name (1 to 64 characters of [A-Za-z0-9_.-])"));
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
      return absl::InvalidArgumentError(absl::StrCat(
          "policies: unknown policy \"", name, "\" (see ListPolicies)"));
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

absl::StatusOr<std::shared_ptr<const Topology>> LoadSessionTopology(
    const v1::TopologySource& source, std::shared_ptr<const Topology> host) {
  absl::StatusOr<Topology> topology;
  switch (source.source_case()) {
    case v1::TopologySource::SOURCE_NOT_SET:
      return host;
    case v1::TopologySource::kXml:
      topology = LoadTopologyFromXml(
          source.xml(),
          source.xml_name().empty() ? "uploaded.xml" : source.xml_name());
      break;
    case v1::TopologySource::kSpec:
      if (source.spec() == kHostSource) return host;
      if (!absl::StartsWith(source.spec(), "synthetic:")) {
        return absl::InvalidArgumentError(absl::StrCat(
            "topology.spec: \"", source.spec(),
            "\" is neither \"host\" nor \"synthetic:...\"; send an XML "
            "file's bytes in topology.xml"));
      }
      topology = LoadTopology(source.spec());
      break;
  }
  if (!topology.ok()) return topology.status();
  return std::make_shared<const Topology>(*std::move(topology));
}

}  // namespace schedcache
