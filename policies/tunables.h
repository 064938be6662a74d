// Tunables: the model's own (docs/MODEL.md table) and each policy's, described
// with defaults and ranges so they can be listed and validated before any
// instance exists.
#ifndef SCHEDCACHE_POLICIES_TUNABLES_H_
#define SCHEDCACHE_POLICIES_TUNABLES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/model_defaults.h"
#include "events/event.h"
#include "events/jiffy_clock.h"

namespace schedcache {

// TunableSpec describes one integer tunable (booleans are 0..1, enums are
// small integer ranges with named values).
struct TunableSpec {
  std::string name;         // e.g. "aggr_tolerance"
  std::string description;  // one line, with the unit
  int64_t default_value = 0;
  int64_t min_value = 0;
  int64_t max_value = 0;
  std::vector<std::string> value_names;  // enums/bools: name of min_value + i
};

// TunableValues holds explicitly set tunables by name. Validate against specs
// with ValidateTunables before use.
using TunableValues = absl::flat_hash_map<std::string, int64_t>;

// ValidateTunables checks that every value names a spec and lies in its
// range. Returns InvalidArgument naming the tunable, the value and the range.
absl::Status ValidateTunables(const std::vector<TunableSpec>& specs,
                              const TunableValues& values);

// ParseTunableValue reads "12", "true"/"false", or a named value of `spec`.
// Returns InvalidArgument naming the tunable and the text.
absl::StatusOr<int64_t> ParseTunableValue(const TunableSpec& spec,
                                          absl::string_view text);

// Enable is the `enable` tunable (docs/MODEL.md).
enum class Enable { kAuto = 0, kOn = 1, kOff = 2 };

// ModelTunables are docs/MODEL.md's per-session tunables, with its defaults.
// The model keeps time as the kernel does, in jiffies (docs/MODEL.md, "Time
// in jiffies"): `hz` ticks a second, epochs of epoch_period_jiffies, and a
// timestamp's jiffy given by the clock anchor.
struct ModelTunables {
  // The tick rate (kernel CONFIG_HZ).
  int64_t hz = kDefaultHz;
  // The epoch length in jiffies (kernel llc_epoch_period); 0: HZ / 100 as
  // the kernel's default, at least 1 (see epoch_period()).
  int64_t epoch_period_jiffies = 0;
  // The clock anchor (a capture's KernelClock): jiffies became
  // clock_anchor_jiffies at clock_anchor_ns. Both 0: jiffy 0 at t = 0.
  int64_t clock_anchor_ns = 0;
  int64_t clock_anchor_jiffies = 0;
  // epoch_anchor_jiffies is a jiffy at which an epoch begins on every CPU
  // (KernelClock::cpu_epoch_next); -1: the session's first jiffy.
  int64_t epoch_anchor_jiffies = -1;
  int64_t affinity_timeout_epochs = 5;
  int64_t aggr_tolerance = 1;  // 0..100
  bool numa_balancing = false;
  Enable enable = Enable::kAuto;
  // A sample, hand-over or Recommend may move the session clock at most
  // this far in one step (docs/MODEL.md, one session clock).
  int64_t max_clock_jump_ns = kMaxClockJumpNs;
  // A process with no runtime sample for longer than this on the sample
  // clock is evicted (docs/SERVICE.md); 0: never. The service's, not the
  // kernel's: an exit the collector missed must not leave a preference
  // behind for ever.
  int64_t process_idle_timeout_ns = 0;

  // tick_ns is the length of one jiffy, ns.
  int64_t tick_ns() const { return TickNs(hz); }
  // epoch_period is the epoch length in jiffies the model uses: the
  // tunable, or HZ / 100 for 0; at least 1, as the kernel's
  // max(llc_epoch_period, 1).
  int64_t epoch_period() const {
    return std::max<int64_t>(
        epoch_period_jiffies != 0 ? epoch_period_jiffies : hz / 100, 1);
  }
  // jiffy_clock maps the session's timestamps to jiffies.
  JiffyClock jiffy_clock() const {
    return JiffyClock{.tick_ns = tick_ns(),
                      .anchor_ns = clock_anchor_ns,
                      .anchor_jiffies = clock_anchor_jiffies};
  }

  // Specs lists them with defaults and ranges, in this order.
  static const std::vector<TunableSpec>& Specs();
  // FromValues validates `values` against Specs() and builds the struct.
  static absl::StatusOr<ModelTunables> FromValues(const TunableValues& values);
  // ForEachValue calls `visit` with every tunable's spec and value, in
  // Specs() order.
  void ForEachValue(
      absl::FunctionRef<void(const TunableSpec&, int64_t)> visit) const;
  // ToValues is every tunable by its Specs() name; FromValues(ToValues())
  // gives back the same struct.
  TunableValues ToValues() const;
};

// RetiredModelTunable says what replaced a model tunable that no longer
// exists (e.g. epoch_period_ns: hz and epoch_period_jiffies): an
// InvalidArgument naming both, for every place that resolves tunables by
// name; OK for any other name.
absl::Status RetiredModelTunable(absl::string_view name);

// KernelClockValues is the model tunables a capture's clock header sets
// (hz, epoch_period_jiffies and the clock and epoch anchors), so that the
// model's jiffies and epochs fall where the recording kernel's did.
// Returns InvalidArgument naming a field outside the tunables' ranges.
absl::StatusOr<TunableValues> KernelClockValues(const KernelClock& clock);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_TUNABLES_H_
