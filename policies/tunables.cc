#include "policies/tunables.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace schedcache {
namespace {

std::string RangeText(const TunableSpec& spec) {
  if (spec.value_names.empty()) {
    return absl::StrCat(spec.min_value, "..", spec.max_value);
  }
  return absl::StrCat("one of ", absl::StrJoin(spec.value_names, ", "), " (",
                      spec.min_value, "..", spec.max_value, ")");
}

const TunableSpec* FindSpec(const std::vector<TunableSpec>& specs,
                            absl::string_view name) {
  for (const TunableSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace

absl::Status ValidateTunables(const std::vector<TunableSpec>& specs,
                              const TunableValues& values) {
  for (const auto& [name, value] : values) {
    const TunableSpec* spec = FindSpec(specs, name);
    if (spec == nullptr) {
      std::vector<std::string> known;
      for (const TunableSpec& s : specs) known.push_back(s.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown tunable '", name, "'; known: ",
          known.empty() ? "none" : absl::StrJoin(known, ", ")));
    }
    if (value < spec->min_value || value > spec->max_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("tunable ", name, " = ", value,
                       " is out of range: allowed ", RangeText(*spec)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseTunableValue(const TunableSpec& spec,
                                          absl::string_view text) {
  const std::string lowered = absl::AsciiStrToLower(text);
  for (size_t i = 0; i < spec.value_names.size(); ++i) {
    if (lowered == spec.value_names[i]) {
      return spec.min_value + static_cast<int64_t>(i);
    }
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tunable ", spec.name, ": cannot parse '", text, "': allowed ",
        RangeText(spec)));
  }
  return value;
}

namespace {

// ModelTunableField is one model tunable: its spec and how the struct holds
// it. The one list of model tunables; Specs, FromValues, ToValues and
// ForEachValue all read it.
struct ModelTunableField {
  TunableSpec spec;
  int64_t (*get)(const ModelTunables&);
  void (*set)(ModelTunables&, int64_t);
};

const std::vector<ModelTunableField>& ModelTunableFields() {
  static const std::vector<ModelTunableField>& kFields =
      *new std::vector<ModelTunableField>{
          {{"epoch_period_ns",
            "length of one epoch, ns (kernel llc_epoch_period)", 10'000'000,
            1, int64_t{1} << 40, {}},
           [](const ModelTunables& t) { return t.epoch_period_ns; },
           [](ModelTunables& t, int64_t v) { t.epoch_period_ns = v; }},
          {{"affinity_timeout_epochs",
            "epochs without a scan or a visit before a preference or a "
            "visited CPU expires (kernel llc_epoch_affinity_timeout)",
            5, 0, 1'000'000, {}},
           [](const ModelTunables& t) { return t.affinity_timeout_epochs; },
           [](ModelTunables& t, int64_t v) { t.affinity_timeout_epochs = v; }},
          {{"aggr_tolerance",
            "kernel llc_aggr_tolerance: 0 disables aggregation, >= 100 "
            "ignores the size limits",
            1, 0, 100, {}},
           [](const ModelTunables& t) { return t.aggr_tolerance; },
           [](ModelTunables& t, int64_t v) { t.aggr_tolerance = v; }},
          {{"numa_balancing",
            "whether NUMA balancing is on (scan mask and capacity check)", 0,
            0, 1, {"false", "true"}},
           [](const ModelTunables& t) -> int64_t {
             return t.numa_balancing ? 1 : 0;
           },
           [](ModelTunables& t, int64_t v) { t.numa_balancing = v != 0; }},
          {{"enable",
            "cache-aware scheduling: auto (on when a NUMA node has 2+ LLCs), "
            "on, off",
            static_cast<int64_t>(Enable::kAuto), 0, 2, {"auto", "on", "off"}},
           [](const ModelTunables& t) {
             return static_cast<int64_t>(t.enable);
           },
           [](ModelTunables& t, int64_t v) {
             t.enable = static_cast<Enable>(v);
           }},
          {{"max_clock_jump_ns",
            "largest step of the session clock one sample, hand-over or "
            "Recommend may take, ns; a larger one is rejected",
            ModelTunables{}.max_clock_jump_ns, 1, int64_t{1} << 62, {}},
           [](const ModelTunables& t) { return t.max_clock_jump_ns; },
           [](ModelTunables& t, int64_t v) { t.max_clock_jump_ns = v; }},
          {{"process_idle_timeout_ns",
            "a process with no sample for longer than this on the sample "
            "clock is evicted, ns; 0: never",
            ModelTunables{}.process_idle_timeout_ns, 0, int64_t{1} << 62, {}},
           [](const ModelTunables& t) { return t.process_idle_timeout_ns; },
           [](ModelTunables& t, int64_t v) { t.process_idle_timeout_ns = v; }},
      };
  return kFields;
}

}  // namespace

const std::vector<TunableSpec>& ModelTunables::Specs() {
  static const std::vector<TunableSpec>& kSpecs = *[] {
    auto* specs = new std::vector<TunableSpec>();
    for (const ModelTunableField& field : ModelTunableFields()) {
      specs->push_back(field.spec);
    }
    return specs;
  }();
  return kSpecs;
}

absl::StatusOr<ModelTunables> ModelTunables::FromValues(
    const TunableValues& values) {
  if (absl::Status status = ValidateTunables(Specs(), values); !status.ok()) {
    return status;
  }
  ModelTunables tunables;
  for (const ModelTunableField& field : ModelTunableFields()) {
    if (auto it = values.find(field.spec.name); it != values.end()) {
      field.set(tunables, it->second);
    }
  }
  return tunables;
}

void ModelTunables::ForEachValue(
    absl::FunctionRef<void(const TunableSpec&, int64_t)> visit) const {
  for (const ModelTunableField& field : ModelTunableFields()) {
    visit(field.spec, field.get(*this));
  }
}

TunableValues ModelTunables::ToValues() const {
  TunableValues values;
  ForEachValue([&values](const TunableSpec& spec, int64_t value) {
    values[spec.name] = value;
  });
  return values;
}

}  // namespace schedcache
