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

const std::vector<TunableSpec>& ModelTunables::Specs() {
  static const std::vector<TunableSpec>& kSpecs = *new std::vector<TunableSpec>{
      {"epoch_period_ns", "length of one epoch, ns (kernel llc_epoch_period)",
       10'000'000, 1, int64_t{1} << 40, {}},
      {"affinity_timeout_epochs",
       "epochs without a scan or a visit before a preference or a visited CPU "
       "expires (kernel llc_epoch_affinity_timeout)",
       5, 0, 1'000'000, {}},
      {"aggr_tolerance",
       "kernel llc_aggr_tolerance: 0 disables aggregation, >= 100 ignores the "
       "size limits",
       1, 0, 100, {}},
      {"numa_balancing",
       "whether NUMA balancing is on (scan mask and capacity check)", 0, 0, 1,
       {"false", "true"}},
      {"enable",
       "cache-aware scheduling: auto (on when a NUMA node has 2+ LLCs), on, off",
       static_cast<int64_t>(Enable::kAuto), 0, 2, {"auto", "on", "off"}},
      {"max_clock_jump_ns",
       "largest step of the session clock one sample, hand-over or Recommend "
       "may take, ns; a larger one is rejected",
       ModelTunables{}.max_clock_jump_ns, 1, int64_t{1} << 62, {}},
  };
  return kSpecs;
}

absl::StatusOr<ModelTunables> ModelTunables::FromValues(
    const TunableValues& values) {
  if (absl::Status status = ValidateTunables(Specs(), values); !status.ok()) {
    return status;
  }
  ModelTunables tunables;
  TunableValues all = tunables.ToValues();
  for (const auto& [name, value] : values) all[name] = value;
  tunables.epoch_period_ns = all["epoch_period_ns"];
  tunables.affinity_timeout_epochs = all["affinity_timeout_epochs"];
  tunables.aggr_tolerance = all["aggr_tolerance"];
  tunables.numa_balancing = all["numa_balancing"] != 0;
  tunables.enable = static_cast<Enable>(all["enable"]);
  tunables.max_clock_jump_ns = all["max_clock_jump_ns"];
  return tunables;
}

TunableValues ModelTunables::ToValues() const {
  return {
      {"epoch_period_ns", epoch_period_ns},
      {"affinity_timeout_epochs", affinity_timeout_epochs},
      {"aggr_tolerance", aggr_tolerance},
      {"numa_balancing", numa_balancing ? 1 : 0},
      {"enable", static_cast<int64_t>(enable)},
      {"max_clock_jump_ns", max_clock_jump_ns},
  };
}

}  // namespace schedcache
