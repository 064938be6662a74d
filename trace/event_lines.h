// EventLines remembers which input line each event of a stream came from,
// so that the rejections a server reports by stream position
// (v1::Rejection::index, counting from 0) can be named by their line, as a
// local rejection is.
//
// Memory: runs of consecutive events whose line minus index is constant
// share one entry, so a CSV file costs one entry per gap (a blank, comment
// or malformed row) whatever its length. A trace line that gives several
// events costs one entry per extra event, so at most kMaxRuns entries
// (16 MiB) are kept; events after them have no known line.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_TRACE_EVENT_LINES_H_
#define SCHEDCACHE_TRACE_EVENT_LINES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace schedcache {

class EventLines {
 public:
  static constexpr size_t kMaxRuns = size_t{1} << 20;

  // Add records that the next event (index size()) came from `line`.
  void Add(int64_t line);

  // LineOf returns the line of event `index`, or nullopt when it is not
  // known (never added, or past kMaxRuns).
  std::optional<int64_t> LineOf(uint64_t index) const;

  // size is the number of events added.
  uint64_t size() const { return events_; }

 private:
  struct Run {
    uint64_t first_index;
    int64_t line_minus_index;  // the same for every event of the run
  };

  std::vector<Run> runs_;
  uint64_t events_ = 0;
  uint64_t known_ = 0;  // events [0, known_) have a line
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_EVENT_LINES_H_
