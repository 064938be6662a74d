#include "policies/session_settings.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/message_text.h"
#include "common/status_macros.h"
#include "policies/tunables.h"

namespace schedcache {
namespace {

// Longer than any number or value name; ParseTunableValue echoes the text.
constexpr size_t kMaxTunableValueLength = 64;

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
absl::Status ApplySetting(const TunableSetting& setting,
                          std::vector<PolicySlot>& slots,
                          TunableValues& model_values) {
  const std::string& name = setting.name;
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
      return SetPolicyTunable(slot, *spec, setting.value);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("tunables: ", QuoteForMessage(name), " names policy ",
                     QuoteForMessage(policy),
                     ", which is not one of this session's policies"));
  }
  if (const TunableSpec* spec = FindSpec(ModelTunables::Specs(), name)) {
    ASSIGN_OR_RETURN(model_values[name], ParseValue(*spec, setting.value));
    return absl::OkStatus();
  }
  bool found = false;
  for (PolicySlot& slot : slots) {
    if (const TunableSpec* spec = FindSpec(slot.specs, name)) {
      RETURN_IF_ERROR(SetPolicyTunable(slot, *spec, setting.value));
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

absl::StatusOr<SessionSettings> ResolveSessionChoices(
    std::string name, const SessionChoices& choices,
    const PolicyRegistry& registry, int64_t max_processes) {
  const std::vector<std::string>& policies = choices.policies;
  SessionSettings settings;
  settings.name = std::move(name);
  if (policies.empty()) {
    return absl::InvalidArgumentError(
        "policies: at least one policy is required (the first is the "
        "reference)");
  }
  absl::flat_hash_set<std::string> seen;
  for (const std::string& policy : policies) {
    if (registry.Find(policy) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("policies: unknown policy ", QuoteForMessage(policy),
                       " (see ListPolicies)"));
    }
    if (!seen.insert(policy).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("policies: \"", policy, "\" is listed twice"));
    }
    settings.policies.push_back(PolicyChoice{policy, {}});
  }
  std::vector<PolicySlot> slots;
  for (PolicyChoice& choice : settings.policies) {
    slots.push_back(
        PolicySlot{&choice, registry.Find(choice.name)->tunables()});
  }
  TunableValues model_values;
  for (const TunableSetting& setting : choices.tunables) {
    RETURN_IF_ERROR(ApplySetting(setting, slots, model_values));
  }
  ASSIGN_OR_RETURN(settings.options.model,
                   ModelTunables::FromValues(model_values));
  settings.options.trigger = choices.trigger;
  settings.options.max_processes = max_processes;
  return settings;
}

}  // namespace schedcache
