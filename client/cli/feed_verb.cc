// `schedcache feed FILE|-`: send samples in the CSV format of
// client/csv/sample_csv.h to a session and print what the server accepted.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/service_verb_support.h"
#include "client/cli/verb.h"
#include "client/csv/sample_csv.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "feed";
// How many rejections feed prints (the server keeps its first 16).
constexpr size_t kShownRejections = 16;

class FeedVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "send samples from a CSV file (or - for stdin) to a session";
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
    std::ifstream file;
    std::istream* in = &std::cin;
    if (positional[0] != "-") {
      file.open(positional[0]);
      if (!file) {
        return Fail(kVerb, absl::NotFoundError("cannot read " + positional[0]),
                    err);
      }
      in = &file;
    }
    client::IngestOptions options;
    options.max_batch_events = static_cast<int>(batch_);
    std::unique_ptr<client::Client> client = Connect(common_);
    std::unique_ptr<client::IngestWriter> writer =
        client->StartIngest(common_.session, options);
    SampleCsvReader reader(*in);
    // The CSV line of each event sent, to name the server's rejections by
    // line rather than by stream position.
    std::vector<int> lines;
    uint64_t malformed = 0;
    std::vector<std::pair<int, std::string>> rejections;  // (line, reason)
    while (true) {
      absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
      if (!event.ok()) {
        // Without a header this is not a sample CSV at all: stop.
        if (!reader.header_seen()) return Fail(kVerb, event.status(), err);
        // A malformed row is rejected on its own; the rest still count.
        ++malformed;
        if (rejections.size() < kShownRejections) {
          rejections.emplace_back(reader.line(), event.status().message());
        }
        continue;
      }
      if (!event->has_value()) break;
      lines.push_back(reader.line());
      const absl::Status added = std::visit(
          [&writer](const auto& value) { return writer->Add(value); },
          **event);
      if (!added.ok()) break;  // Finish reports the stream's status
    }
    absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    if (!summary.ok()) return Fail(kVerb, summary.status(), err);
    for (const v1::Rejection& rejection : summary->first_rejections()) {
      // Every index is of an event sent, so it has a line.
      const int line = rejection.index() < lines.size()
                           ? lines[rejection.index()]
                           : reader.line();
      rejections.emplace_back(
          line, absl::StrCat("line ", line, ": ", rejection.reason()));
    }
    // The JSON summary is the server's, with malformed rows counted in
    // `rejected` (its first_rejections keep stream positions).
    summary->set_rejected(summary->rejected() + malformed);
    if (common_.json()) {
      PrintJson(*summary, out);
      return kExitOk;
    }
    std::stable_sort(rejections.begin(), rejections.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (rejections.size() > kShownRejections) {
      rejections.resize(kShownRejections);
    }
    out << "accepted " << summary->accepted() << ", rejected "
        << summary->rejected() << "\n";
    for (const auto& [line, reason] : rejections) out << "  " << reason << "\n";
    return kExitOk;
  }

 private:
  CommonFlags common_;
  int64_t batch_ = 1024;
};

}  // namespace

std::unique_ptr<Verb> MakeFeedVerb() { return std::make_unique<FeedVerb>(); }

}  // namespace schedcache::cli
