// The client's Sample/HandOver -> EventColumns encoding and the server's
// reading of it are inverses, "unchanged" markers included; and the
// server's Event -> Sample reading of the simple form.
#include <type_traits>
#include <variant>
#include <vector>

#include "client/lib/columns_encoder.h"
#include "gtest/gtest.h"
#include "server/proto_convert.h"

namespace schedcache {
namespace {

std::vector<Event> RoundTrip(const v1::IngestBatch& batch) {
  EXPECT_TRUE(CheckBatchForm(batch).ok()) << CheckBatchForm(batch);
  std::vector<Event> out;
  ForEachBatchEvent(batch, [&out](const auto& event) {
    if constexpr (std::is_same_v<std::decay_t<decltype(event)>,
                                 UnreadableRow>) {
      ADD_FAILURE() << event.reason;
    } else {
      out.push_back(event);
    }
  });
  return out;
}

Sample FullSample() {
  Sample sample;
  sample.timestamp_ns = 123456789;
  sample.cpu = 7;
  sample.tgid = 42;
  sample.tid = 43;
  sample.delta_ns = 1000;
  sample.tick = true;
  sample.nr_threads = 8;
  sample.numa_node = -1;  // "no preferred node", distinct from unchanged
  sample.footprint_pages = 0;
  sample.comm.Assign("redis-server");
  return sample;
}

void ExpectSameSample(const Sample& back, const Sample& sample) {
  EXPECT_EQ(back.timestamp_ns, sample.timestamp_ns);
  EXPECT_EQ(back.cpu, sample.cpu);
  EXPECT_EQ(back.tgid, sample.tgid);
  EXPECT_EQ(back.tid, sample.tid);
  EXPECT_EQ(back.delta_ns, sample.delta_ns);
  EXPECT_EQ(back.tick, sample.tick);
  EXPECT_EQ(back.nr_threads, sample.nr_threads);
  EXPECT_EQ(back.numa_node, sample.numa_node);
  EXPECT_EQ(back.footprint_pages, sample.footprint_pages);
  EXPECT_EQ(back.comm.view(), sample.comm.view());
}

TEST(ColumnsRoundTrip, SampleWithEveryFieldSet) {
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  EXPECT_EQ(encoder.rows(), 1);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 1u);
  ExpectSameSample(std::get<Sample>(back[0]), FullSample());
}

TEST(ColumnsRoundTrip, UnchangedFieldsGetNoAttributeEntry) {
  Sample sample;
  sample.tgid = 1;
  sample.tid = 1;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(sample);
  EXPECT_EQ(batch.columns().attributes().row_size(), 0);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 1u);
  ExpectSameSample(std::get<Sample>(back[0]), sample);
}

TEST(ColumnsRoundTrip, MixedRowsKeepOrderTimesAndAttributes) {
  Sample first = FullSample();
  Sample plain;  // earlier than `first` (another CPU): a negative delta
  plain.timestamp_ns = 100;
  plain.cpu = 1;
  plain.tgid = 5;
  plain.tid = 6;
  plain.delta_ns = 10;
  Sample comm_only = plain;
  comm_only.timestamp_ns = 200;
  comm_only.comm.Assign("worker");
  const HandOver idle{.timestamp_ns = 150, .cpu = 3, .tgid = 0, .tid = 0};
  const std::vector<Event> events = {first, idle, plain, comm_only};

  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  for (const Event& event : events) {
    std::visit([&encoder](const auto& e) { encoder.Add(e); }, event);
  }
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 4u);
  ExpectSameSample(std::get<Sample>(back[0]), first);
  const HandOver& back_idle = std::get<HandOver>(back[1]);
  EXPECT_EQ(back_idle.timestamp_ns, 150);
  EXPECT_EQ(back_idle.cpu, 3);
  EXPECT_EQ(back_idle.tgid, 0);
  EXPECT_EQ(back_idle.tid, 0);
  ExpectSameSample(std::get<Sample>(back[2]), plain);
  ExpectSameSample(std::get<Sample>(back[3]), comm_only);
  // Only rows 0 and 3 set attributes.
  EXPECT_EQ(batch.columns().attributes().row_size(), 2);
}

TEST(ColumnsRoundTrip, ClearStartsTheNextBatchAfresh) {
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Clear();
  EXPECT_EQ(encoder.rows(), 0);
  Sample next = FullSample();
  next.timestamp_ns = 5;
  encoder.Add(next);
  EXPECT_EQ(batch.columns().timestamp_delta_ns(0), 5);  // not 5 - previous
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 1u);
  ExpectSameSample(std::get<Sample>(back[0]), next);
}

TEST(ColumnsRoundTrip, ExtremeTimesSurviveDeltaCoding) {
  Sample low;
  low.timestamp_ns = INT64_MIN;
  low.tgid = low.tid = 1;
  Sample high = low;
  high.timestamp_ns = INT64_MAX;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(low);
  encoder.Add(high);
  encoder.Add(low);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(std::get<Sample>(back[0]).timestamp_ns, INT64_MIN);
  EXPECT_EQ(std::get<Sample>(back[1]).timestamp_ns, INT64_MAX);
  EXPECT_EQ(std::get<Sample>(back[2]).timestamp_ns, INT64_MIN);
}

TEST(EventFromProto, EveryFieldAndUnsetOnes) {
  v1::Event event;
  event.set_timestamp_ns(9);
  event.set_cpu(1);
  event.set_tgid(2);
  event.set_tid(3);
  event.set_delta_ns(4);
  event.set_tick(true);
  event.set_numa_node(-1);
  Sample sample = SampleFromEvent(event);
  EXPECT_EQ(sample.timestamp_ns, 9);
  EXPECT_EQ(sample.delta_ns, 4);
  EXPECT_TRUE(sample.tick);
  EXPECT_EQ(sample.numa_node, -1);
  EXPECT_EQ(sample.nr_threads, kUnchangedNrThreads);
  EXPECT_EQ(sample.footprint_pages, kUnchangedFootprint);
  EXPECT_TRUE(sample.comm.empty());
}

TEST(EventFromProto, LongCommIsTruncatedLikeTheKernel) {
  v1::Event event;
  event.set_comm("a-very-long-process-name");
  EXPECT_EQ(SampleFromEvent(event).comm.view(), "a-very-long-pro");
}

}  // namespace
}  // namespace schedcache
