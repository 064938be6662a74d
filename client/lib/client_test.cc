// IngestWriter against a scripted server: when batches are sent and what
// each carries (only the first names the session; losses added twice ride
// summed in the next batch, also one with no event), that a writer is
// finished once, and when a failed stream's error carries the server's
// summary. The timer never fires here (max_delay is infinite), so every
// batch is sent by a full batch, Flush or Finish, in an order the test
// knows.
#include "schedcache/client.h"

#include <memory>
#include <string>
#include <vector>

#include "client/lib/scripted_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::client {
namespace {

using ::testing::ElementsAre;

// Tick is a sample of thread 11 of process 10 on CPU 0 at `ts`.
Sample Tick(int64_t ts) {
  Sample sample;
  sample.timestamp_ns = ts;
  sample.cpu = 0;
  sample.tgid = 10;
  sample.tid = 11;
  sample.delta_ns = 5;
  sample.tick = true;
  return sample;
}

// BatchShapes describes each batch sent as "session:rows".
std::vector<std::string> BatchShapes(
    const std::vector<v1::IngestBatch>& batches) {
  std::vector<std::string> shapes;
  for (const v1::IngestBatch& batch : batches) {
    shapes.push_back(batch.session() + ":" +
                     std::to_string(batch.columns().timestamp_delta_ns_size()));
  }
  return shapes;
}

class IngestWriterTest : public ScriptedServerTest {
 protected:

  std::unique_ptr<IngestWriter> StartIngest(int max_batch_events) {
    return client_->StartIngest(
        "s", {.max_batch_events = max_batch_events,
              .max_delay = absl::InfiniteDuration()});
  }

};

TEST_F(IngestWriterTest, FullBatchesGoAtOnceAndOnlyTheFirstNamesTheSession) {
  v1::IngestSummary answer;
  answer.set_accepted(5);
  server_->AnswerIngest(grpc::Status::OK, answer, std::nullopt);
  std::unique_ptr<IngestWriter> writer = StartIngest(2);
  ASSERT_TRUE(writer->Flush().ok());  // nothing to send: no batch
  // Events 1-2 and 3-4 fill a batch each; Finish sends event 5.
  for (int64_t ts = 1; ts <= 5; ++ts) ASSERT_TRUE(writer->Add(Tick(ts)).ok());
  absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 5u);
  EXPECT_THAT(BatchShapes(server_->batches()),
              ElementsAre("s:2", ":2", ":1"));
  // Timestamps travel as deltas from the previous row, restarting at each
  // batch: batch 3's only row is 5 - 0.
  EXPECT_EQ(server_->batches()[2].columns().timestamp_delta_ns(0), 5);
}

TEST_F(IngestWriterTest, LossesAddedTwiceRideSummedInTheNextBatchOnly) {
  std::unique_ptr<IngestWriter> writer = StartIngest(100);
  v1::CollectorLosses first;
  first.set_ring_buffer_lost(3);
  first.set_unparsed(1);
  v1::CollectorLosses second;
  second.set_ring_buffer_lost(4);
  second.set_late(2);
  writer->AddLosses(first);
  writer->AddLosses(second);
  ASSERT_TRUE(writer->Flush().ok());  // losses alone make a batch
  ASSERT_TRUE(writer->Add(Tick(1)).ok());
  ASSERT_TRUE(writer->Finish().ok());
  const std::vector<v1::IngestBatch> batches = server_->batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].columns().timestamp_delta_ns_size(), 0);
  // 3 + 4 ring buffer, 1 + 0 unparsed, 0 + 2 late.
  EXPECT_EQ(batches[0].collector_losses().ring_buffer_lost(), 3u + 4u);
  EXPECT_EQ(batches[0].collector_losses().unparsed(), 1u);
  EXPECT_EQ(batches[0].collector_losses().late(), 2u);
  EXPECT_FALSE(batches[1].has_collector_losses());
}

TEST_F(IngestWriterTest, AWriterIsFinishedOnce) {
  std::unique_ptr<IngestWriter> writer = StartIngest(100);
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(writer->Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer->Flush().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(IngestWriterTest, AFailedStreamCarriesASummaryOnlyWhenTheServerSentOne) {
  v1::IngestSummary applied;
  applied.set_accepted(7);
  applied.set_batches(1);
  server_->AnswerIngest(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping"),
      v1::IngestSummary(), applied);
  std::unique_ptr<IngestWriter> writer = StartIngest(100);
  ASSERT_TRUE(writer->Add(Tick(1)).ok());
  const absl::Status stopped = writer->Finish().status();
  EXPECT_EQ(stopped.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(stopped.message(), "the server is stopping");
  ASSERT_TRUE(IngestSummaryOf(stopped).has_value());
  EXPECT_EQ(IngestSummaryOf(stopped)->accepted(), 7u);

  server_->AnswerIngest(
      grpc::Status(grpc::StatusCode::NOT_FOUND, "session \"s\" not found"),
      v1::IngestSummary(), std::nullopt);
  writer = StartIngest(100);
  const absl::Status missing = writer->Finish().status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(IngestSummaryOf(missing).has_value());
  EXPECT_FALSE(IngestSummaryOf(absl::OkStatus()).has_value());
}

}  // namespace
}  // namespace schedcache::client
