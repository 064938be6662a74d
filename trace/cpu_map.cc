#include "trace/cpu_map.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace schedcache {
namespace {

struct Range {
  int first = 0;
  int last = 0;
};

bool ParseCpu(absl::string_view text, int& cpu) {
  text = absl::StripAsciiWhitespace(text);
  return absl::SimpleAtoi(text, &cpu) && cpu >= 0 && cpu <= CpuMap::kMaxCpu;
}

bool ParseRange(absl::string_view text, Range& range) {
  const size_t dash = text.find('-');
  if (dash == absl::string_view::npos) {
    if (!ParseCpu(text, range.first)) return false;
    range.last = range.first;
    return true;
  }
  return ParseCpu(text.substr(0, dash), range.first) &&
         ParseCpu(text.substr(dash + 1), range.last) &&
         range.first <= range.last;
}

}  // namespace

absl::StatusOr<CpuMap> CpuMap::Parse(absl::string_view text) {
  CpuMap map;
  if (absl::StripAsciiWhitespace(text).empty()) return map;
  // Two trace CPUs on one target would merge their threads' runtime and
  // occupancy on that CPU and silently change every policy's results.
  absl::flat_hash_map<int, int> from_of;  // target CPU -> trace CPU

  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    const size_t sep = entry.find_first_of(":=");
    Range from, to;
    if (sep == absl::string_view::npos ||
        !ParseRange(entry.substr(0, sep), from) ||
        !ParseRange(entry.substr(sep + 1), to)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cpu map entry '", entry,
          "' is not FROM=TO (or FROM:TO) with CPU numbers or ranges A-B (0..",
          kMaxCpu, ")"));
    }
    if (from.last - from.first != to.last - to.first) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu map entry '", entry, "' maps ",
                       from.last - from.first + 1, " CPUs onto ",
                       to.last - to.first + 1));
    }
    if (static_cast<size_t>(from.last) >= map.to_.size()) {
      map.to_.resize(from.last + 1, -1);
    }
    for (int cpu = from.first; cpu <= from.last; ++cpu) {
      if (map.to_[cpu] >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cpu map maps trace cpu ", cpu, " twice (entry '", entry, "')"));
      }
      const int target = to.first + (cpu - from.first);
      auto [it, inserted] = from_of.emplace(target, cpu);
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cpu map sends trace cpus ", it->second, " and ", cpu,
            " both to cpu ", target, " (entry '", entry, "')"));
      }
      map.to_[cpu] = target;
    }
  }
  return map;
}

}  // namespace schedcache
