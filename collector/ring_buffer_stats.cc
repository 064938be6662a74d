#include "collector/ring_buffer_stats.h"

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace schedcache::host {
namespace {

struct UsedKey {
  absl::string_view name;
  std::uint64_t RingBufferStats::*field;
};

constexpr std::array<UsedKey, 3> kUsedKeys = {{
    {"overrun", &RingBufferStats::overrun},
    {"commit overrun", &RingBufferStats::commit_overrun},
    {"dropped events", &RingBufferStats::dropped_events},
}};

}  // namespace

RingBufferStats& RingBufferStats::operator+=(const RingBufferStats& other) {
  overrun += other.overrun;
  commit_overrun += other.commit_overrun;
  dropped_events += other.dropped_events;
  return *this;
}

absl::StatusOr<RingBufferStats> ParseRingBufferStats(absl::string_view text,
                                                     absl::string_view source) {
  RingBufferStats stats;
  std::array<bool, kUsedKeys.size()> seen{};
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    const std::pair<absl::string_view, absl::string_view> key_value =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    if (key_value.first.size() == line.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_number,
                       ": expected `key: value`, got \"", line, "\""));
    }
    const absl::string_view key = absl::StripAsciiWhitespace(key_value.first);
    for (std::size_t i = 0; i < kUsedKeys.size(); ++i) {
      if (key != kUsedKeys[i].name) continue;
      const absl::string_view value =
          absl::StripAsciiWhitespace(key_value.second);
      std::uint64_t number = 0;
      if (!absl::SimpleAtoi(value, &number) || value.front() == '-') {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ":", line_number, ": ", key,
                         " is not a non-negative integer: \"", value, "\""));
      }
      stats.*kUsedKeys[i].field = number;
      seen[i] = true;
    }
  }
  for (std::size_t i = 0; i < kUsedKeys.size(); ++i) {
    if (!seen[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": no \"", kUsedKeys[i].name, ":\" line in \"", text, "\""));
    }
  }
  return stats;
}

}  // namespace schedcache::host
