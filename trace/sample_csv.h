// The sample CSV format of `schedcache feed` and `schedcache ab --input
// csv:PATH` (docs/SERVICE.md): a header line
//
//   timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,footprint_pages,comm
//
// or the same with the optional cache_group column before comm
//
//   timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,footprint_pages,cache_group,comm
//
// then one event per line. A row with delta_ns is a Sample; a row with an
// empty delta_ns is a HandOver (tgid 0 and tid 0: the CPU went idle); a
// row with empty cpu, tid and delta_ns is a ProcessExit of tgid.
// Empty nr_threads, numa_node and footprint_pages mean "unchanged";
// numa_node -1 means "no preferred node". tick is 0/1 (or false/true,
// empty = 0). cache_group is a sample's Sample::cache_group, a decimal
// uint64 (empty = 0: the process's own group). comm is the rest of the
// line, so it may contain commas (and cache_group goes before it).
// Blank lines and lines starting with '#' are skipped. The file is read
// through LineReader, so it may be gzip, and a line is at most
// LineReader::kMaxLineBytes.
//
// Thread contract: SampleCsvReader is thread-compatible; ParseSampleCsvRow
// is a pure function.
#ifndef SCHEDCACHE_TRACE_SAMPLE_CSV_H_
#define SCHEDCACHE_TRACE_SAMPLE_CSV_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "events/event.h"
#include "trace/line_reader.h"

namespace schedcache {

inline constexpr absl::string_view kSampleCsvHeader =
    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
    "footprint_pages,comm";
inline constexpr absl::string_view kSampleCsvHeaderWithCacheGroup =
    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
    "footprint_pages,cache_group,comm";

// SampleCsvColumns says which header a file has: whether its rows have the
// cache_group column.
enum class SampleCsvColumns { kWithoutCacheGroup, kWithCacheGroup };

// CsvEvent is one row: a runtime sample, a hand-over or a process exit.
using CsvEvent = Event;

// ParseSampleCsvRow parses one data row of a file whose header is
// `columns`'. Returns InvalidArgument naming the column and its text (quoted
// by QuoteInput), e.g. an integer out of its column's range.
absl::StatusOr<CsvEvent> ParseSampleCsvRow(
    absl::string_view row,
    SampleCsvColumns columns = SampleCsvColumns::kWithoutCacheGroup);

// SampleCsvReader reads events from a LineReader, checking the header first.
class SampleCsvReader {
 public:
  // `lines` must outlive the reader.
  explicit SampleCsvReader(LineReader& lines) : lines_(lines) {}

  // Next returns the next event, or std::nullopt at the end of the input.
  // Either header may come first (kSampleCsvHeader or
  // kSampleCsvHeaderWithCacheGroup); the rows follow it.
  // A bad row gives InvalidArgument naming its line (and column); the row
  // is consumed, so to reject bad rows one by one (feed and ab do) call
  // Next again, once header_seen(): before it, the input is most likely not
  // this format at all, and an input without the header is InvalidArgument
  // too. Any other code ends the input (LineReader's DataLoss for a
  // truncated gzip file or a read error, OutOfRange for a line over the
  // line limit).
  absl::StatusOr<std::optional<CsvEvent>> Next();

  // header_seen tells whether the header line has been read.
  bool header_seen() const { return header_seen_; }

  // line is the number of the last line read (1-based).
  int64_t line() const { return lines_.line_number(); }

 private:
  LineReader& lines_;
  bool header_seen_ = false;
  SampleCsvColumns columns_ = SampleCsvColumns::kWithoutCacheGroup;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_SAMPLE_CSV_H_
