// `schedcache feed FILE|-`: send samples in the CSV format of
// trace/sample_csv.h to a session and print what the server accepted.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"
#include "trace/event_lines.h"
#include "trace/line_reader.h"
#include "trace/sample_csv.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "feed";
// How many rejections feed prints (the server keeps its first 16).
constexpr size_t kShownRejections = 16;

// Sent is what SendCsv read and sent.
struct Sent {
  EventLines lines;  // the CSV line of each event sent
  uint64_t malformed = 0;
  // The first malformed rows (line, reason), then the server's rejections.
  std::vector<std::pair<int64_t, std::string>> rejections;
  // What ended the input before its end (a truncated gzip file, a line
  // over the limit), if anything.
  absl::Status read_error;
};

// SendCsv adds every event of `reader` to `writer`. A malformed row is
// rejected on its own; the rest still count. Returns the error of an input
// that is not a sample CSV at all (no header).
absl::StatusOr<Sent> SendCsv(SampleCsvReader& reader,
                             client::IngestWriter& writer) {
  Sent sent;
  while (true) {
    absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
    if (!event.ok()) {
      if (!reader.header_seen()) return event.status();
      if (!absl::IsInvalidArgument(event.status())) {
        sent.read_error = event.status();
        return sent;
      }
      ++sent.malformed;
      if (sent.rejections.size() < kShownRejections) {
        sent.rejections.emplace_back(reader.line(), event.status().message());
      }
      continue;
    }
    if (!event->has_value()) return sent;
    sent.lines.Add(reader.line());
    const absl::Status added = std::visit(
        [&writer](const auto& value) { return writer.Add(value); }, **event);
    if (!added.ok()) return sent;  // Finish reports the stream's status
  }
}

// AddServerRejections names each of the server's first rejections by its
// CSV line (past EventLines' cap, by its stream position).
void AddServerRejections(const v1::IngestSummary& summary, Sent& sent) {
  for (const v1::Rejection& rejection : summary.first_rejections()) {
    const std::optional<int64_t> line = sent.lines.LineOf(rejection.index());
    sent.rejections.emplace_back(
        line.value_or(INT64_MAX),
        line.has_value()
            ? absl::StrCat("line ", *line, ": ", rejection.reason())
            : absl::StrCat("event ", rejection.index(), " of the stream: ",
                           rejection.reason()));
  }
}

class FeedVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "send samples from a CSV file (plain, gzip or zstd; - for stdin) to a "
           "session";
  }
  absl::string_view positional_usage() const override { return "FILE|-"; }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
    flags.AddInt64("--batch", "N", "events per Ingest batch", &batch_);
  }

  int Run(const std::vector<std::string>& positional, std::ostream& out,
          std::ostream& err) override {
    if (positional.size() != 1) return Usage(kVerb, "expected FILE or -", err);
    if (batch_ < 1) return Usage(kVerb, "--batch must be >= 1", err);
    absl::StatusOr<LineReader> lines = LineReader::Open(positional[0]);
    if (!lines.ok()) return Fail(kVerb, lines.status(), err);
    client::IngestOptions options;
    options.max_batch_events = static_cast<int>(batch_);
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    std::unique_ptr<client::IngestWriter> writer =
        (*client)->StartIngest(common_.session, options);
    SampleCsvReader reader(*lines);
    absl::StatusOr<Sent> sent = SendCsv(reader, *writer);
    if (!sent.ok()) return Fail(kVerb, sent.status(), err);
    absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    if (!summary.ok()) return Fail(kVerb, summary.status(), err);
    if (!sent->read_error.ok()) {
      // The events before the error are in the session: say how many.
      return Fail(kVerb,
                  absl::Status(sent->read_error.code(),
                               absl::StrCat(sent->read_error.message(), "; ",
                                            sent->lines.size(),
                                            " events before it were sent, ",
                                            summary->accepted(), " accepted")),
                  err);
    }
    AddServerRejections(*summary, *sent);
    // The JSON summary is the server's, with malformed rows counted in
    // `rejected` (its first_rejections keep stream positions).
    summary->set_rejected(summary->rejected() + sent->malformed);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*summary, out);
      return printed.ok() ? kExitOk : Fail(kVerb, printed, err);
    }
    Print(*summary, sent->rejections, out);
    return kExitOk;
  }

 private:
  // Print writes the counts and the first rejections in line order.
  static void Print(const v1::IngestSummary& summary,
                    std::vector<std::pair<int64_t, std::string>> rejections,
                    std::ostream& out) {
    std::stable_sort(
        rejections.begin(), rejections.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    if (rejections.size() > kShownRejections) {
      rejections.resize(kShownRejections);
    }
    out << "accepted " << summary.accepted() << ", rejected "
        << summary.rejected() << "\n";
    for (const auto& [line, reason] : rejections) out << "  " << reason << "\n";
  }

  CommonFlags common_;
  int64_t batch_ = 1024;
};

}  // namespace

std::unique_ptr<Verb> MakeFeedVerb() { return std::make_unique<FeedVerb>(); }

}  // namespace schedcache::cli
