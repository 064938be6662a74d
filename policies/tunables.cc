#include "policies/tunables.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

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

// The model tunables' bounds: HZ as record's --hz takes it (Linux's is at
// most 1000; a jiffy then lasts at least 10 us, so no jiffy count of a
// time in [0, 2^62] ns overflows); a period of the kernel's u32
// llc_epoch_period; anchors in the range of timestamps.
constexpr int64_t kMaxHz = 100'000;
constexpr int64_t kMaxPeriodJiffies = (int64_t{1} << 32) - 1;
constexpr int64_t kMaxAnchor = int64_t{1} << 62;

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
          {{"hz",
            "tick rate of the recording kernel (CONFIG_HZ): one jiffy is "
            "1e9 / hz ns",
            ModelTunables{}.hz, 1, kMaxHz, {}},
           [](const ModelTunables& t) { return t.hz; },
           [](ModelTunables& t, int64_t v) { t.hz = v; }},
          {{"epoch_period_jiffies",
            "length of one epoch, jiffies (kernel llc_epoch_period); 0: "
            "hz / 100, at least 1",
            ModelTunables{}.epoch_period_jiffies, 0, kMaxPeriodJiffies, {}},
           [](const ModelTunables& t) { return t.epoch_period_jiffies; },
           [](ModelTunables& t, int64_t v) { t.epoch_period_jiffies = v; }},
          {{"clock_anchor_ns",
            "clock anchor: the time, ns, at which jiffies became "
            "clock_anchor_jiffies (a capture's clock header)",
            ModelTunables{}.clock_anchor_ns, 0, kMaxAnchor, {}},
           [](const ModelTunables& t) { return t.clock_anchor_ns; },
           [](ModelTunables& t, int64_t v) { t.clock_anchor_ns = v; }},
          {{"clock_anchor_jiffies",
            "clock anchor: the jiffies value that began at clock_anchor_ns",
            ModelTunables{}.clock_anchor_jiffies, 0, kMaxAnchor, {}},
           [](const ModelTunables& t) { return t.clock_anchor_jiffies; },
           [](ModelTunables& t, int64_t v) { t.clock_anchor_jiffies = v; }},
          {{"epoch_anchor_jiffies",
            "a jiffy at which every CPU's epoch begins (the kernel's "
            "rq->cpu_epoch_next); -1: the session's first jiffy",
            ModelTunables{}.epoch_anchor_jiffies, -1, kMaxAnchor, {}},
           [](const ModelTunables& t) { return t.epoch_anchor_jiffies; },
           [](ModelTunables& t, int64_t v) { t.epoch_anchor_jiffies = v; }},
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
  for (const auto& [name, value] : values) {
    RETURN_IF_ERROR(RetiredModelTunable(name));
  }
  RETURN_IF_ERROR(ValidateTunables(Specs(), values));
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

absl::Status RetiredModelTunable(absl::string_view name) {
  if (name == "epoch_period_ns") {
    return absl::InvalidArgumentError(
        "tunable epoch_period_ns is gone: epochs run in jiffies as the "
        "kernel's do; set hz and epoch_period_jiffies instead");
  }
  return absl::OkStatus();
}

absl::StatusOr<TunableValues> KernelClockValues(const KernelClock& clock) {
  TunableValues values{{"hz", clock.hz},
                       {"epoch_period_jiffies", clock.epoch_period},
                       {"clock_anchor_ns", clock.at_ns},
                       {"clock_anchor_jiffies", clock.jiffies},
                       {"epoch_anchor_jiffies", clock.cpu_epoch_next}};
  if (absl::Status status = ValidateTunables(ModelTunables::Specs(), values);
      !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel clock header: ", status.message()));
  }
  return values;
}

}  // namespace schedcache
