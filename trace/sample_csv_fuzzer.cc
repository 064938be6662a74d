// Fuzz target: the bytes of a sample CSV read the way `schedcache feed` and
// `schedcache ab --input csv:` read one (a bad row before the header ends
// the input, after it is skipped).
//
// Besides the sanitizers, it checks that the reader always moves on (each
// event or error is a new line, and never past the input's last line) and
// that it neither drops nor invents a row: every data row after the header
// (counted here from the text: not blank, not a '#' comment) becomes exactly
// one event or one rejected row. What an engine does with the events is
// ingest_batch_fuzzer's to check (server/): a batch carries every event a
// CSV row can, at any value, and is applied to a session's engine.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fuzzing.h"
#include "trace/line_reader.h"
#include "trace/sample_csv.h"

namespace schedcache {
namespace {

// DataRows is the number of rows after the header line of `text`, counted
// without the reader: lines that are neither blank nor '#' comments, but the
// first of them (the header).
int64_t DataRows(const std::string& text) {
  int64_t rows = -1;  // the first is the header
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::ConsumeSuffix(&line, "\r");
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty() && line.front() != '#') ++rows;
  }
  return std::max<int64_t>(rows, 0);
}

void FuzzOneInput(const std::string& text) {
  // One line per '\n', and one more for text after the last.
  const int64_t lines = std::count(text.begin(), text.end(), '\n') +
                        (text.empty() || text.back() == '\n' ? 0 : 1);
  LineReader input = LineReader::FromText(text, "fuzz-input");
  SampleCsvReader reader(input);
  int64_t events = 0;
  int64_t rejected = 0;
  int64_t last_line = 0;
  while (true) {
    absl::StatusOr<std::optional<CsvEvent>> next = reader.Next();
    if (next.ok() && !next->has_value()) break;
    // Without a header the input is not a sample CSV, and a line over the
    // limit ends any input: feed and ab stop.
    if (!next.ok() &&
        (!reader.header_seen() ||
         next.status().code() != absl::StatusCode::kInvalidArgument)) {
      return;
    }
    FUZZ_CHECK(reader.line() > last_line && reader.line() <= lines,
               absl::StrCat("read line ", reader.line(), " after line ",
                            last_line, " of ", lines));
    last_line = reader.line();
    if (!next.ok()) {
      ++rejected;
      continue;
    }
    ++events;
  }
  FUZZ_CHECK(events + rejected == DataRows(text),
             absl::StrCat("read ", events, " events and ", rejected,
                          " rejected rows from ", DataRows(text),
                          " data rows"));
}

}  // namespace
}  // namespace schedcache

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  schedcache::FuzzOneInput(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
