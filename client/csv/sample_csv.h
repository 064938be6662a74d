// The sample CSV format of `schedcache feed` and `schedcache ab --input
// csv:PATH` (docs/SERVICE.md): a header line
//
//   timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,footprint_pages,comm
//
// then one event per line. A row with delta_ns is a Sample; a row with an
// empty delta_ns is a HandOver (tgid 0 and tid 0: the CPU went idle).
// Empty nr_threads, numa_node and footprint_pages mean "unchanged";
// numa_node -1 means "no preferred node". tick is 0/1 (or false/true,
// empty = 0). comm is the rest of the line, so it may contain commas.
// Blank lines and lines starting with '#' are skipped.
//
// Thread contract: SampleCsvReader is thread-compatible; ParseSampleCsvRow
// is a pure function.
#ifndef SCHEDCACHE_CLIENT_CSV_SAMPLE_CSV_H_
#define SCHEDCACHE_CLIENT_CSV_SAMPLE_CSV_H_

#include <istream>
#include <optional>
#include <string>
#include <variant>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policies/sample.h"

namespace schedcache {

inline constexpr absl::string_view kSampleCsvHeader =
    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
    "footprint_pages,comm";

// CsvEvent is one row: a runtime sample or a hand-over.
using CsvEvent = Event;

// ParseSampleCsvRow parses one data row. Returns InvalidArgument naming the
// column and its text.
absl::StatusOr<CsvEvent> ParseSampleCsvRow(absl::string_view row);

// SampleCsvReader reads events from a stream, checking the header first.
class SampleCsvReader {
 public:
  // `in` must outlive the reader.
  explicit SampleCsvReader(std::istream& in) : in_(in) {}

  // Next returns the next event, std::nullopt at the end of input, or
  // InvalidArgument naming the line number (and column) of a bad line or a
  // missing header. A bad row is consumed: to skip and count malformed rows
  // (feed and ab do), call Next again once header_seen(); before it, the
  // input is most likely not this format at all.
  absl::StatusOr<std::optional<CsvEvent>> Next();

  // header_seen tells whether the header line has been read.
  bool header_seen() const { return header_seen_; }

  // line is the number of the last line read (1-based).
  int line() const { return line_; }

 private:
  std::istream& in_;
  std::string text_;
  int line_ = 0;
  bool header_seen_ = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_CLIENT_CSV_SAMPLE_CSV_H_
