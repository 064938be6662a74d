#include "trace/event_lines.h"

#include <algorithm>

namespace schedcache {

void EventLines::Add(int64_t line) {
  const uint64_t index = events_++;
  if (known_ != index) return;  // the cap was reached before
  // Lines and indices are far below 2^62, so the difference is exact.
  const int64_t offset = line - static_cast<int64_t>(index);
  if (runs_.empty() || runs_.back().line_minus_index != offset) {
    if (runs_.size() == kMaxRuns) return;
    runs_.push_back(Run{index, offset});
  }
  known_ = events_;
}

std::optional<int64_t> EventLines::LineOf(uint64_t index) const {
  if (index >= known_) return std::nullopt;
  // The last run starting at or before `index`.
  const auto after = std::upper_bound(
      runs_.begin(), runs_.end(), index,
      [](uint64_t i, const Run& run) { return i < run.first_index; });
  return std::prev(after)->line_minus_index + static_cast<int64_t>(index);
}

}  // namespace schedcache
