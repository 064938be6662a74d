// `schedcache feed FILE|-`: send samples in the CSV format of
// client/csv/sample_csv.h to a session and print what the server accepted.
#include <fstream>
#include <iostream>
#include <memory>
#include <variant>

#include "client/cli/service_verb_support.h"
#include "client/cli/verb.h"
#include "client/csv/sample_csv.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "feed";

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
    while (true) {
      absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
      if (!event.ok()) return Fail(kVerb, event.status(), err);
      if (!event->has_value()) break;
      const absl::Status added = std::visit(
          [&writer](const auto& value) { return writer->Add(value); },
          **event);
      if (!added.ok()) break;  // Finish reports the stream's status
    }
    absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    if (!summary.ok()) return Fail(kVerb, summary.status(), err);
    if (common_.json()) {
      PrintJson(*summary, out);
      return kExitOk;
    }
    out << "accepted " << summary->accepted() << ", rejected "
        << summary->rejected() << "\n";
    for (const v1::Rejection& rejection : summary->first_rejections()) {
      out << "  event " << rejection.index() << ": " << rejection.reason()
          << "\n";
    }
    return kExitOk;
  }

 private:
  CommonFlags common_;
  int64_t batch_ = 1024;
};

}  // namespace

std::unique_ptr<Verb> MakeFeedVerb() { return std::make_unique<FeedVerb>(); }

}  // namespace schedcache::cli
