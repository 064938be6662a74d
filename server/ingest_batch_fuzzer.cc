// Fuzz target: the bytes of one message of an Ingest stream, through what
// schedcached does with it (IngestStream::Parse, then DecodedBatch::ApplyTo):
// parse as a schedcache.v1.IngestBatch, either form (Event messages or
// EventColumns), the --max_batch_events limit and CheckBatchForm, then
// apply it to a fresh session built as CreateSession builds one (built-in
// policies on kFuzzTopology), and ask for its report and a recommendation.
//
// Besides the sanitizers, it checks the counts Ingest promises to be exact:
// every event of the batch (samples, hand-overs, exits and kernel decisions)
// is accepted or rejected once, and GetReport and GetSession agree with the
// stream's summary.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/proto_convert.h"
#include "api/session_config.h"
#include "common/fuzzing.h"
#include "google/protobuf/stubs/logging.h"
#include "policies/builtin_policies.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/ingest_stream.h"
#include "server/limits.h"
#include "server/session.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

std::shared_ptr<Session> MakeFuzzSession() {
  static const PolicyRegistry& registry =
      *new PolicyRegistry(ValueOrAbort(BuildPolicyRegistry({})));
  static const auto topology = std::make_shared<const Topology>(
      ValueOrAbort(LoadTopology(kFuzzTopology)));
  v1::CreateSessionRequest request;
  request.set_name("fuzz");
  request.mutable_topology()->set_spec(kFuzzTopology);
  for (const char* policy : {"full-scan", "visited-scan", "none", "kernel"}) {
    request.add_policies(policy);
  }
  SessionSettings settings = ValueOrAbort(
      BuildSessionSettings(request, registry, Limits{}.max_processes));
  return ValueOrAbort(Session::Create(std::move(settings), topology, registry,
                                      Limits{}.watch_history));
}

// FirstTgid is the tgid of the batch's first event, in either form.
int32_t FirstTgid(const v1::IngestBatch& batch) {
  if (batch.events_size() > 0) return batch.events(0).tgid();
  if (batch.columns().tgid_size() > 0) return batch.columns().tgid(0);
  return 0;
}

void FuzzOneInput(const uint8_t* data, size_t size) {
  v1::IngestBatch batch;
  if (!batch.ParseFromArray(data, static_cast<int>(size))) return;
  const int events = BatchEventCount(batch);
  if (events > Limits{}.max_batch_events) return;
  if (!CheckBatchForm(batch).ok()) return;

  std::shared_ptr<Session> session = MakeFuzzSession();
  DecodedBatch decoded;
  StreamComms comms(Limits{}.max_processes);
  decoded.Decode(batch, comms);
  IngestTally tally;
  const absl::Status applied = decoded.ApplyTo(*session, tally);
  FUZZ_CHECK(applied.ok(), applied.ToString());
  FUZZ_CHECK(
      tally.accepted() + tally.rejected() == static_cast<uint64_t>(events),
      absl::StrCat(events, " events: ", tally.accepted(), " accepted, ",
                   tally.rejected(), " rejected"));
  const v1::Report report = session->Report();
  FUZZ_CHECK(
      report.samples_applied() + report.handovers_applied() +
                  report.process_exits_applied() +
                  report.process_starts_applied() +
                  report.kernel_decisions_applied() ==
              tally.accepted() &&
          report.events_rejected() == tally.rejected(),
      absl::StrCat("tally ", tally.accepted(), " accepted, ", tally.rejected(),
                   " rejected; report ", report.ShortDebugString()));
  const v1::Session described = session->Describe();
  FUZZ_CHECK(
      described.events_accepted() == tally.accepted() &&
          described.events_rejected() == tally.rejected(),
      absl::StrCat("tally ", tally.accepted(), " accepted, ", tally.rejected(),
                   " rejected; session ", described.ShortDebugString()));

  RecommendRequest recommend;
  recommend.tgid = FirstTgid(batch);
  recommend.scan = true;
  // NotFound or InvalidArgument are answers too; only crashes count.
  session->Recommend(recommend).IgnoreError();
}

}  // namespace
}  // namespace schedcache

// LLVMFuzzerInitialize silences protobuf's log line for every input whose
// string fields are not UTF-8 (a parse failure, as the server sees it): at
// thousands of inputs a second the lines would cost more than the parsing.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  schedcache::FuzzOneInput(data, size);
  return 0;
}
