#include "trace/sample_csv.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "trace/quoted_input.h"

namespace schedcache {
namespace {

enum Column {
  kTimestamp,
  kCpu,
  kTgid,
  kTid,
  kDelta,
  kTick,
  kNrThreads,
  kNumaNode,
  kFootprint,
  kCacheGroup,  // optional: only under kSampleCsvHeaderWithCacheGroup
  kComm,
  kColumns
};

constexpr std::array<absl::string_view, kColumns> kColumnNames = {
    "timestamp_ns", "cpu",        "tgid",      "tid",
    "delta_ns",     "tick",       "nr_threads", "numa_node",
    "footprint_pages", "cache_group", "comm"};

absl::Status BadColumn(Column column, absl::string_view text,
                       absl::string_view expected) {
  return absl::InvalidArgumentError(absl::StrCat(
      "column ", kColumnNames[column], ": ", QuoteInput(text), " is not ",
      expected));
}

// IsDecimal tells whether `text` is an optionally signed run of digits.
bool IsDecimal(absl::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    text.remove_prefix(1);
  }
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// Int reads a required integer column; a number outside T is named so.
template <typename T>
absl::StatusOr<T> Int(Column column, absl::string_view text) {
  const absl::string_view digits = absl::StripAsciiWhitespace(text);
  T value;
  if (absl::SimpleAtoi(digits, &value)) return value;
  if (!IsDecimal(digits)) return BadColumn(column, text, "an integer");
  return BadColumn(column, text,
                   absl::StrCat("an integer from ",
                                std::numeric_limits<T>::min(), " to ",
                                std::numeric_limits<T>::max()));
}

// Empty tells whether a column holds nothing but blanks.
bool Empty(absl::string_view text) {
  return absl::StripAsciiWhitespace(text).empty();
}

// OptionalInt reads a column where empty means `unchanged`.
template <typename T>
absl::StatusOr<T> OptionalInt(Column column, absl::string_view text,
                              T unchanged) {
  if (Empty(text)) return unchanged;
  return Int<T>(column, text);
}

absl::StatusOr<bool> Bool(Column column, absl::string_view text) {
  const absl::string_view value = absl::StripAsciiWhitespace(text);
  if (value.empty() || value == "0" || value == "false") return false;
  if (value == "1" || value == "true") return true;
  return BadColumn(column, text, "0, 1, false or true");
}

// ProcessExitRow reads a row with an empty cpu: the exit of process tgid.
// It names only its time and process; a thread or a runtime would say the
// row meant something else, so those must be empty too.
absl::StatusOr<CsvEvent> ProcessExitRow(
    const absl::StatusOr<int64_t>& timestamp,
    const std::array<absl::string_view, kColumns>& fields) {
  absl::StatusOr<int32_t> tgid = Int<int32_t>(kTgid, fields[kTgid]);
  for (const absl::Status& status : {timestamp.status(), tgid.status()}) {
    if (!status.ok()) return status;
  }
  for (const Column column : {kTid, kDelta}) {
    if (!Empty(fields[column])) {
      return BadColumn(column, fields[column],
                       "empty, as a process-exit row (empty cpu) needs");
    }
  }
  return ProcessExit{*timestamp, *tgid};
}

}  // namespace

absl::StatusOr<CsvEvent> ParseSampleCsvRow(absl::string_view row,
                                           SampleCsvColumns columns) {
  // The columns before comm are split on commas; comm is the rest. Without
  // the cache_group column its field stays empty: group 0.
  const bool with_group = columns == SampleCsvColumns::kWithCacheGroup;
  std::array<absl::string_view, kColumns> fields;
  int found = 0;
  for (int i = 0; i < kComm; ++i) {
    if (i == kCacheGroup && !with_group) continue;
    const size_t comma = row.find(',');
    if (comma == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expected ", with_group ? kColumns : kColumns - 1, " columns (",
          with_group ? kSampleCsvHeaderWithCacheGroup : kSampleCsvHeader,
          "), found ", found + 1));
    }
    fields[i] = row.substr(0, comma);
    row.remove_prefix(comma + 1);
    ++found;
  }
  fields[kComm] = row;

  absl::StatusOr<int64_t> timestamp = Int<int64_t>(kTimestamp, fields[kTimestamp]);
  if (Empty(fields[kCpu])) return ProcessExitRow(timestamp, fields);
  absl::StatusOr<int32_t> cpu = Int<int32_t>(kCpu, fields[kCpu]);
  absl::StatusOr<int32_t> tgid = Int<int32_t>(kTgid, fields[kTgid]);
  absl::StatusOr<int32_t> tid = Int<int32_t>(kTid, fields[kTid]);
  for (const absl::Status& status :
       {timestamp.status(), cpu.status(), tgid.status(), tid.status()}) {
    if (!status.ok()) return status;
  }
  if (Empty(fields[kDelta])) {
    HandOver handover;
    handover.timestamp_ns = *timestamp;
    handover.cpu = *cpu;
    handover.tgid = *tgid;
    handover.tid = *tid;
    return handover;
  }
  Sample sample;
  sample.timestamp_ns = *timestamp;
  sample.cpu = *cpu;
  sample.tgid = *tgid;
  sample.tid = *tid;
  absl::StatusOr<int64_t> delta = Int<int64_t>(kDelta, fields[kDelta]);
  absl::StatusOr<bool> tick = Bool(kTick, fields[kTick]);
  absl::StatusOr<int32_t> nr_threads =
      OptionalInt<int32_t>(kNrThreads, fields[kNrThreads], kUnchangedNrThreads);
  absl::StatusOr<int32_t> numa_node =
      OptionalInt<int32_t>(kNumaNode, fields[kNumaNode], kUnchangedNumaNode);
  absl::StatusOr<int64_t> footprint = OptionalInt<int64_t>(
      kFootprint, fields[kFootprint], kUnchangedFootprint);
  absl::StatusOr<uint64_t> cache_group =
      OptionalInt<uint64_t>(kCacheGroup, fields[kCacheGroup], kOwnCacheGroup);
  for (const absl::Status& status :
       {delta.status(), tick.status(), nr_threads.status(), numa_node.status(),
        footprint.status(), cache_group.status()}) {
    if (!status.ok()) return status;
  }
  sample.cache_group = *cache_group;
  sample.delta_ns = *delta;
  sample.tick = *tick;
  sample.nr_threads = *nr_threads;
  sample.numa_node = *numa_node;
  sample.footprint_pages = *footprint;
  sample.comm.Assign(
      std::string_view(fields[kComm].data(), fields[kComm].size()));
  return sample;
}

absl::StatusOr<std::optional<CsvEvent>> SampleCsvReader::Next() {
  while (true) {
    ASSIGN_OR_RETURN(const std::optional<std::string_view> text,
                     lines_.NextLine());
    if (!text.has_value()) break;
    absl::string_view row(text->data(), text->size());
    absl::ConsumeSuffix(&row, "\r");
    const absl::string_view trimmed = absl::StripAsciiWhitespace(row);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (!header_seen_) {
      if (trimmed == kSampleCsvHeaderWithCacheGroup) {
        columns_ = SampleCsvColumns::kWithCacheGroup;
      } else if (trimmed != kSampleCsvHeader) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", line(), ": expected the header \"", kSampleCsvHeader,
            "\" (or with cache_group before comm), found ",
            QuoteInput(trimmed)));
      }
      header_seen_ = true;
      continue;
    }
    absl::StatusOr<CsvEvent> event = ParseSampleCsvRow(row, columns_);
    if (!event.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line(), ": ", event.status().message()));
    }
    return std::optional<CsvEvent>(*std::move(event));
  }
  if (!header_seen_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", lines_.path(), "' has no header line \"", kSampleCsvHeader,
        "\" (", line() == 0 ? "it is empty" : "only blank or # lines", ")"));
  }
  return std::optional<CsvEvent>();
}

}  // namespace schedcache
