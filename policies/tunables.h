// Tunables: the model's own (DESIGN.md §1 table) and each policy's, described
// with defaults and ranges so they can be listed and validated before any
// instance exists.
#ifndef SCHEDCACHE_POLICIES_TUNABLES_H_
#define SCHEDCACHE_POLICIES_TUNABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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

// Enable is DESIGN's `enable` tunable.
enum class Enable { kAuto = 0, kOn = 1, kOff = 2 };

// ModelTunables are DESIGN.md §1's per-session tunables, with its defaults.
struct ModelTunables {
  int64_t epoch_period_ns = 10'000'000;
  int64_t affinity_timeout_epochs = 5;
  int64_t aggr_tolerance = 1;  // 0..100
  bool numa_balancing = false;
  Enable enable = Enable::kAuto;
  // A sample, hand-over or Recommend may move the session clock at most
  // this far in one step (DESIGN §1, one session clock): 3,600 s.
  int64_t max_clock_jump_ns = int64_t{3'600} * 1'000'000'000;
  // A process with no runtime sample for longer than this on the sample
  // clock is evicted (DESIGN §5.2); 0: never. The service's, not the
  // kernel's: an exit the collector missed must not leave a preference
  // behind for ever.
  int64_t process_idle_timeout_ns = 0;

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

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_TUNABLES_H_
