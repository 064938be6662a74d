// IngestStream's parts below the wire, and the stream itself on an
// in-process gRPC server: the tally keeps the first rejections with their
// stream-wide indices while counting every one; a decoded batch's
// unreadable rows and the engine's refusals come out in row order, also
// when unreadable rows trail the last event; a closed session counts
// nothing; a later batch that names another session ends the stream; and
// a stream opened after StopAll is refused with an empty summary.
#include "server/ingest_stream.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "common/service_defaults.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/testing/test_registry.h"
#include "policies/testing/test_topologies.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "server/limits.h"

namespace schedcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// RejectedIndices lists the stream indices of `summary`'s first rejections.
std::vector<uint64_t> RejectedIndices(const v1::IngestSummary& summary) {
  std::vector<uint64_t> indices;
  for (const v1::Rejection& rejection : summary.first_rejections()) {
    indices.push_back(rejection.index());
  }
  return indices;
}

TEST(IngestTally, KeepsTheFirstRejectionsWithStreamIndicesAndCountsAll) {
  IngestTally tally;
  // Batch 1: 20 events, offsets 0..11 rejected: 12 kept, 8 accepted.
  for (uint64_t offset = 0; offset < 12; ++offset) {
    tally.Reject(offset, absl::InvalidArgumentError(absl::StrCat("r", offset)));
  }
  tally.EndBatch(20);
  // Batch 2: 10 events from stream index 20, offsets 2, 4, 6, 8, 9
  // rejected. The first four fill the 16 kept (indices 22, 24, 26, 28);
  // offset 9 (index 29) is the 17th, counted but not kept. Accepted:
  // 8 + (10 - 5) = 13; rejected: 12 + 5 = 17.
  for (uint64_t offset : {2, 4, 6, 8, 9}) {
    tally.Reject(offset, absl::InvalidArgumentError(absl::StrCat("s", offset)));
  }
  tally.EndBatch(10);
  EXPECT_EQ(tally.accepted(), 13u);
  EXPECT_EQ(tally.rejected(), 17u);

  // Fill replaces what the summary held.
  v1::IngestSummary summary;
  summary.add_first_rejections()->set_index(999);
  tally.Fill(summary);
  EXPECT_EQ(summary.accepted(), 13u);
  EXPECT_EQ(summary.rejected(), 17u);
  ASSERT_EQ(summary.first_rejections_size(), IngestTally::kMaxReasons);
  EXPECT_EQ(summary.first_rejections(11).index(), 11u);
  EXPECT_EQ(summary.first_rejections(11).reason(), "r11");
  EXPECT_EQ(summary.first_rejections(12).index(), 22u);
  EXPECT_EQ(summary.first_rejections(12).reason(), "s2");
  EXPECT_EQ(summary.first_rejections(15).index(), 28u);
  EXPECT_EQ(summary.first_rejections(15).reason(), "s8");
}

// Tick is an Event message: `tgid`'s thread `tgid` ran 10 ns on `cpu` up
// to `ts`. tgid 0 is valid on the wire, but no process has it, so the
// engine refuses it (docs/MODEL.md, The model).
v1::Event Tick(int64_t ts, int cpu, int32_t tgid) {
  v1::Event event;
  event.set_timestamp_ns(ts);
  event.set_cpu(cpu);
  event.set_tgid(tgid);
  event.set_tid(tgid);
  event.set_delta_ns(10);
  event.set_tick(true);
  return event;
}

// TwoKinds is an Event no reader can read: a hand-over and an exit at once.
v1::Event TwoKinds() {
  v1::Event event;
  event.set_handover(true);
  event.set_process_exit(true);
  return event;
}

v1::IngestBatch Batch(const std::string& session,
                      const std::vector<v1::Event>& events) {
  v1::IngestBatch batch;
  batch.set_session(session);
  for (const v1::Event& event : events) *batch.add_events() = event;
  return batch;
}

// MakeSession is a session called `name` over the 1 node x 2 LLCs x 4 CPUs
// grid with full-scan, scanning only when asked.
std::shared_ptr<Session> MakeSession(const std::string& name) {
  SessionSettings settings;
  settings.name = name;
  settings.policies.push_back(PolicyChoice{"full-scan", {}});
  settings.options.trigger = ScanTrigger::kQuery;
  absl::StatusOr<std::shared_ptr<Session>> session = Session::Create(
      std::move(settings), test_support::MakeGrid({1, 2, 4}),
      test_support::TestRegistry(), /*watch_history=*/16);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

// Named is a sample of process `tgid` carrying `comm` (empty: none).
Sample Named(int32_t tgid, std::string_view comm) {
  Sample sample;
  sample.tgid = tgid;
  sample.tid = tgid;
  sample.comm.Assign(comm);
  return sample;
}

TEST(StreamComms, GivesEachProcessItsLastCommOncePerBatchUntilItEnds) {
  StreamComms comms(Limits{}.max_processes);
  comms.StartBatch();
  Sample first = Named(1, "redis-server");
  comms.Fill(first);  // sent: remembered, kept
  EXPECT_EQ(first.comm.view(), "redis-server");
  Sample same_batch = Named(1, "");
  comms.Fill(same_batch);  // this batch already carried it
  EXPECT_TRUE(same_batch.comm.empty());
  Sample never_named = Named(2, "");
  comms.Fill(never_named);  // nothing known: stays unnamed
  EXPECT_TRUE(never_named.comm.empty());

  // The next batch: the first sample gets the name back (the engine may
  // have evicted the process), the second does not need it.
  comms.StartBatch();
  Sample next = Named(1, "");
  comms.Fill(next);
  EXPECT_EQ(next.comm.view(), "redis-server");
  Sample again = Named(1, "");
  comms.Fill(again);
  EXPECT_TRUE(again.comm.empty());

  // A rename within a batch replaces it for the batches after.
  Sample renamed = Named(1, "redis-bio");
  comms.Fill(renamed);
  comms.StartBatch();
  Sample later = Named(1, "");
  comms.Fill(later);
  EXPECT_EQ(later.comm.view(), "redis-bio");

  // Processes 1 and 65 share a slot of the cache of those handled this
  // batch (64 slots): interleaved, each still gets its name once.
  Sample other = Named(65, "valkey-server");
  comms.Fill(other);
  comms.StartBatch();
  Sample one = Named(1, "");
  Sample sixty_five = Named(65, "");
  Sample one_again = Named(1, "");
  comms.Fill(one);
  comms.Fill(sixty_five);
  comms.Fill(one_again);
  EXPECT_EQ(one.comm.view(), "redis-bio");
  EXPECT_EQ(sixty_five.comm.view(), "valkey-server");
  EXPECT_TRUE(one_again.comm.empty());

  // An exit (or start) forgets it: a new process with the tgid is unnamed.
  comms.Forget(1);
  comms.StartBatch();
  Sample reused = Named(1, "");
  comms.Fill(reused);
  EXPECT_TRUE(reused.comm.empty());
}

TEST(StreamComms, ForgetsEveryProcessRatherThanHoldMoreThanItsCapacity) {
  StreamComms comms(/*capacity=*/2);
  comms.StartBatch();
  Sample one = Named(1, "one");
  Sample two = Named(2, "two");
  Sample renamed = Named(2, "two-b");  // a known process: no room needed
  comms.Fill(one);
  comms.Fill(two);
  comms.Fill(renamed);
  comms.StartBatch();
  Sample one_back = Named(1, "");
  comms.Fill(one_back);  // both held: 1 still gets its name back
  EXPECT_EQ(one_back.comm.view(), "one");

  // A third process finds the 2 places taken: the stream forgets 1 and 2
  // and holds 3 alone.
  Sample three = Named(3, "three");
  comms.Fill(three);
  comms.StartBatch();
  Sample one_after = Named(1, "");
  Sample two_after = Named(2, "");
  Sample three_after = Named(3, "");
  comms.Fill(one_after);
  comms.Fill(two_after);
  comms.Fill(three_after);
  EXPECT_TRUE(one_after.comm.empty());
  EXPECT_TRUE(two_after.comm.empty());
  EXPECT_EQ(three_after.comm.view(), "three");
}

TEST(DecodedBatch, UnreadableRowsAndRefusedEventsAreRejectedInRowOrder) {
  std::shared_ptr<Session> session = MakeSession("s");
  ASSERT_NE(session, nullptr);
  // Rows 0, 3, 4 and 6 are unreadable (6 after the last event); the engine
  // sees rows 1, 2 and 5 as its events 0, 1 and 2 and refuses event 1
  // (row 2, tgid 0). Rejected rows: 0, 2, 3, 4, 6; accepted: rows 1, 5.
  const v1::IngestBatch first =
      Batch("s", {TwoKinds(), Tick(10, 0, 1), Tick(20, 0, 0), TwoKinds(),
                  TwoKinds(), Tick(30, 1, 2), TwoKinds()});
  DecodedBatch decoded;
  StreamComms comms(Limits{}.max_processes);
  IngestTally tally;
  decoded.Decode(first, comms);
  ASSERT_TRUE(decoded.ApplyTo(*session, tally).ok());
  // The same DecodedBatch again: nothing of the first batch may remain.
  // Its row 0 (stream index 7) is refused, row 1 accepted.
  const v1::IngestBatch second = Batch("", {Tick(40, 0, 0), Tick(50, 0, 1)});
  decoded.Decode(second, comms);
  ASSERT_TRUE(decoded.ApplyTo(*session, tally).ok());

  v1::IngestSummary summary;
  tally.Fill(summary);
  EXPECT_EQ(summary.accepted(), 3u);
  EXPECT_EQ(summary.rejected(), 6u);
  EXPECT_THAT(RejectedIndices(summary), ElementsAre(0u, 2u, 3u, 4u, 6u, 7u));
  EXPECT_THAT(summary.first_rejections(0).reason(),
              HasSubstr("handover and process_exit are both true"));
  EXPECT_THAT(summary.first_rejections(1).reason(), HasSubstr("tgid 0"));
  EXPECT_THAT(summary.first_rejections(5).reason(), HasSubstr("tgid 0"));
  // The session counts the same: unreadable rows among its rejections.
  const SessionStats stats = session->Stats();
  EXPECT_EQ(stats.events_accepted, 3u);
  EXPECT_EQ(stats.events_rejected, 6u);
}

TEST(DecodedBatch, AClosedSessionRefusesTheBatchAndNothingIsCounted) {
  std::shared_ptr<Session> session = MakeSession("s");
  ASSERT_NE(session, nullptr);
  const absl::Status deleted = absl::NotFoundError("session \"s\" was deleted");
  session->Close(deleted);
  DecodedBatch decoded;
  StreamComms comms(Limits{}.max_processes);
  decoded.Decode(Batch("s", {Tick(10, 0, 1), TwoKinds()}), comms);
  IngestTally tally;
  EXPECT_EQ(decoded.ApplyTo(*session, tally), deleted);
  EXPECT_EQ(tally.accepted(), 0u);
  EXPECT_EQ(tally.rejected(), 0u);
}

// IngestOnlyService serves Ingest as schedcached does (a raw method whose
// reactor is an IngestStream); every other method is unimplemented.
class IngestOnlyService final
    : public v1::SchedCache::WithRawCallbackMethod_Ingest<
          v1::SchedCache::CallbackService> {
 public:
  IngestOnlyService(SessionManager& sessions, IngestStreams& streams)
      : sessions_(sessions), streams_(streams) {}

  grpc::ServerReadReactor<grpc::ByteBuffer>* Ingest(
      grpc::CallbackServerContext* context,
      grpc::ByteBuffer* response) override {
    return new IngestStream(sessions_, limiter_, streams_, Limits{}, *context,
                            response);
  }

 private:
  SessionManager& sessions_;
  IngestStreams& streams_;
  StreamLimiter limiter_{Limits{}.max_streams, "Ingest", "--max_streams"};
};

// IngestStreamTest runs IngestOnlyService in process, with sessions "a"
// and "b".
class IngestStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE(sessions_.Reserve(name).ok());
      std::shared_ptr<Session> session = MakeSession(name);
      ASSERT_NE(session, nullptr);
      ASSERT_TRUE(sessions_.Add(session).ok());
    }
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::SchedCache::NewStub(
        server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  // Ingest writes `batches` on one stream and returns its status, with
  // the summary (the response, or the trailer of a failed stream) in
  // `summary`.
  grpc::Status Ingest(const std::vector<v1::IngestBatch>& batches,
                      v1::IngestSummary& summary) {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientWriter<v1::IngestBatch>> writer =
        stub_->Ingest(&context, &summary);
    for (const v1::IngestBatch& batch : batches) {
      if (!writer->Write(batch)) break;  // the server ended the stream
    }
    writer->WritesDone();
    const grpc::Status status = writer->Finish();
    if (!status.ok()) {
      const auto& trailers = context.GetServerTrailingMetadata();
      const auto it = trailers.find(kIngestSummaryTrailer);
      EXPECT_NE(it, trailers.end()) << "a failed stream carries its summary";
      if (it != trailers.end()) {
        EXPECT_TRUE(summary.ParseFromString(
            std::string(it->second.data(), it->second.size())));
      }
    }
    return status;
  }

  SessionManager sessions_{/*max_sessions=*/4, nullptr};
  IngestStreams streams_;
  IngestOnlyService service_{sessions_, streams_};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::SchedCache::Stub> stub_;
};

TEST_F(IngestStreamTest, ALaterBatchNamingAnotherSessionEndsTheStream) {
  // Batches 2 and 3 name no session and the stream's own: both go on to
  // "a". Batch 4 names "b"; batch 5 is never applied.
  v1::IngestSummary summary;
  const grpc::Status status =
      Ingest({Batch("a", {Tick(10, 0, 1)}), Batch("", {Tick(20, 0, 1)}),
              Batch("a", {Tick(30, 0, 1)}), Batch("b", {Tick(40, 0, 1)}),
              Batch("", {Tick(50, 0, 1)})},
             summary);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "batch 4 names session \"b\" but this stream feeds \"a\" "
            "(this stream: 3 events accepted, 0 rejected)");
  EXPECT_EQ(summary.accepted(), 3u);
  EXPECT_EQ(summary.rejected(), 0u);
  // Batch 5 may have been read while batch 4 applied, never applied.
  EXPECT_GE(summary.batches(), 4u);
  EXPECT_LE(summary.batches(), 5u);
  ASSERT_TRUE(sessions_.Find("a").ok());
  EXPECT_EQ((*sessions_.Find("a"))->Stats().events_accepted, 3u);
  EXPECT_EQ((*sessions_.Find("b"))->Stats().events_accepted, 0u);
}

TEST_F(IngestStreamTest, AStreamOpenedAfterStopAllIsRefusedWithAnEmptySummary) {
  streams_.StopAll(absl::UnavailableError("the server is stopping"));
  v1::IngestSummary summary;
  const grpc::Status status = Ingest({Batch("a", {Tick(10, 0, 1)})}, summary);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(),
            "the server is stopping (this stream: 0 events accepted, 0 "
            "rejected)");
  EXPECT_EQ(summary.batches(), 0u);
  EXPECT_EQ((*sessions_.Find("a"))->Stats().events_accepted, 0u);
}

}  // namespace
}  // namespace schedcache
