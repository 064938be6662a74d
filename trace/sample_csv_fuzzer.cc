// Fuzz target: the bytes of a sample CSV read the way `schedcache feed` and
// `schedcache ab --input csv:` read one (a bad row before the header ends
// the input, after it is skipped), with every event applied to an engine
// running the built-in policies on kFuzzTopology, as a session would.
//
// Besides the sanitizers, it checks that the reader always moves on (each
// event or error is a new line, and never past the input's last line) and
// that the engine counts exactly the events it accepted.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/fuzzing.h"
#include "policies/builtin_policies.h"
#include "policies/engine.h"
#include "topology/topology_source.h"
#include "trace/line_reader.h"
#include "trace/sample_csv.h"

namespace schedcache {
namespace {

std::unique_ptr<Engine> MakeFuzzEngine() {
  static const PolicyRegistry& registry =
      *new PolicyRegistry(ValueOrAbort(BuildPolicyRegistry({})));
  static const auto topology = std::make_shared<const Topology>(
      ValueOrAbort(LoadTopology(kFuzzTopology)));
  return ValueOrAbort(
      Engine::Create(topology, registry,
                     {{"full-scan", {}}, {"visited-scan", {}}, {"none", {}}},
                     EngineOptions{}));
}

void FuzzOneInput(const std::string& text) {
  // One line per '\n', and one more for text after the last.
  const int64_t lines = std::count(text.begin(), text.end(), '\n') +
                        (text.empty() || text.back() == '\n' ? 0 : 1);
  LineReader input = LineReader::FromText(text, "fuzz-input");
  SampleCsvReader reader(input);
  std::unique_ptr<Engine> engine = MakeFuzzEngine();
  uint64_t accepted = 0;
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
    if (!next.ok()) continue;
    // A batch of one applies the row as its kind's Apply* would.
    accepted += engine->ApplyBatch(absl::MakeConstSpan(&**next, 1),
                                   [](size_t, const absl::Status&) {});
  }
  const EngineReport report = engine->Report();
  FUZZ_CHECK(report.samples_applied + report.handovers_applied +
                     report.exits_applied ==
                 accepted,
             absl::StrCat("engine applied ", report.samples_applied,
                          " samples, ", report.handovers_applied,
                          " hand-overs and ", report.exits_applied,
                          " exits; ", accepted, " were accepted"));
}

}  // namespace
}  // namespace schedcache

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  schedcache::FuzzOneInput(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
