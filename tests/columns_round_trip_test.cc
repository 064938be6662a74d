// The client's Sample/HandOver -> EventColumns encoding and the server's
// reading of it are inverses, "unchanged" markers included, and attributes
// a batch has sent for a process are not repeated; and the
// server's Event -> Sample reading of the simple form.
#include <type_traits>
#include <variant>
#include <vector>

#include "api/proto_convert.h"
#include "client/lib/columns_encoder.h"
#include "gtest/gtest.h"

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
  sample.jiffies = 4294901485;
  sample.cache_group = 9;
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
  EXPECT_EQ(back.jiffies, sample.jiffies);
  EXPECT_EQ(back.cache_group, sample.cache_group);
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
  // Its own cache group (0): no column, the bytes of a client before it.
  EXPECT_EQ(batch.columns().cache_group_size(), 0);
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

TEST(ColumnsRoundTrip, FixedWidthFormReadsAsThePackedForm) {
  Sample second = FullSample();
  second.timestamp_ns = 100;  // a negative time delta
  second.tick = false;
  second.delta_ns = -7;       // rejected by the engine, kept by the wire
  const std::vector<Event> events = {
      FullSample(), HandOver{123456800, 3, 42, 44}, second,
      ProcessExit{123456900, 42}};
  v1::IngestBatch packed;
  v1::IngestBatch fixed;
  client::ColumnsEncoder packed_encoder(*packed.mutable_columns());
  client::ColumnsEncoder fixed_encoder(*fixed.mutable_columns(),
                                       client::ColumnsForm::kFixedWidth);
  for (const Event& event : events) {
    std::visit([&](const auto& e) { packed_encoder.Add(e); }, event);
    std::visit([&](const auto& e) { fixed_encoder.Add(e); }, event);
  }
  EXPECT_EQ(fixed_encoder.rows(), 4);
  EXPECT_EQ(fixed.columns().timestamp_delta_ns_size(), 0);
  // 4 rows of 8 bytes (times, runtimes) and of 4 (kinds).
  EXPECT_EQ(fixed.columns().timestamp_delta_ns_le().size(), 32u);
  EXPECT_EQ(fixed.columns().delta_ns_le().size(), 32u);
  EXPECT_EQ(fixed.columns().kind_le().size(), 16u);
  const std::vector<Event> from_packed = RoundTrip(packed);
  const std::vector<Event> from_fixed = RoundTrip(fixed);
  ASSERT_EQ(from_fixed.size(), 4u);
  ASSERT_EQ(from_packed.size(), 4u);
  ExpectSameSample(std::get<Sample>(from_fixed[0]), FullSample());
  ExpectSameSample(std::get<Sample>(from_fixed[2]),
                   std::get<Sample>(from_packed[2]));
  EXPECT_EQ(std::get<Sample>(from_fixed[2]).timestamp_ns, 100);
  EXPECT_EQ(std::get<Sample>(from_fixed[2]).delta_ns, -7);
  EXPECT_EQ(std::get<HandOver>(from_fixed[1]).tid, 44);
  EXPECT_EQ(std::get<ProcessExit>(from_fixed[3]).timestamp_ns, 123456900);
}

// Unchanged is `sample` as the server reads a row that repeats every
// attribute already sent: the same sample with all of them unset.
Sample Unchanged(Sample sample) {
  sample.nr_threads = kUnchangedNrThreads;
  sample.numa_node = kUnchangedNumaNode;
  sample.footprint_pages = kUnchangedFootprint;
  sample.comm = Comm();
  sample.jiffies = kDerivedJiffies;
  return sample;
}

TEST(ColumnsRoundTrip, RepeatedAttributesAreSentOncePerBatch) {
  const Sample first = FullSample();
  Sample again = FullSample();
  again.timestamp_ns += 1000;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(first);
  encoder.Add(again);
  // Row 0 carries all four attributes, row 1 none (no entry at all).
  ASSERT_EQ(batch.columns().attributes().row_size(), 1);
  EXPECT_EQ(batch.columns().attributes().row(0), 0u);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 2u);
  ExpectSameSample(std::get<Sample>(back[0]), first);
  ExpectSameSample(std::get<Sample>(back[1]), Unchanged(again));
}

TEST(ColumnsRoundTrip, AChangedAttributeIsStillSentAlone) {
  Sample grown = FullSample();
  grown.timestamp_ns += 1000;
  grown.nr_threads = 9;  // was 8; numa_node, footprint and comm the same
  Sample renamed = grown;
  renamed.timestamp_ns += 1000;
  renamed.comm.Assign("redis-bio");
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Add(grown);
  encoder.Add(renamed);
  const v1::SparseAttributes& attributes = batch.columns().attributes();
  ASSERT_EQ(attributes.row_size(), 3);
  EXPECT_EQ(attributes.fields(1), uint32_t{v1::ATTRIBUTE_BIT_NR_THREADS});
  EXPECT_EQ(attributes.fields(2), uint32_t{v1::ATTRIBUTE_BIT_COMM});
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 3u);
  Sample grown_read = Unchanged(grown);
  grown_read.nr_threads = 9;
  ExpectSameSample(std::get<Sample>(back[1]), grown_read);
  Sample renamed_read = Unchanged(renamed);
  renamed_read.comm.Assign("redis-bio");
  ExpectSameSample(std::get<Sample>(back[2]), renamed_read);
}

TEST(ColumnsRoundTrip, NumaNodeIsPerThreadTheRestPerProcess) {
  Sample other_thread = FullSample();
  other_thread.tid = 44;  // same process 42, same values
  Sample other_process = FullSample();
  other_process.tgid = 50;
  other_process.tid = 50;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Add(other_thread);
  encoder.Add(other_process);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 3u);
  // Thread 44 has no numa_node on the server yet; process 42 has the rest.
  Sample thread_read = Unchanged(other_thread);
  thread_read.numa_node = -1;
  ExpectSameSample(std::get<Sample>(back[1]), thread_read);
  // Jiffies are one counter: process 50's equal ones are not sent again.
  Sample process_read = other_process;
  process_read.jiffies = kDerivedJiffies;
  ExpectSameSample(std::get<Sample>(back[2]), process_read);
}

TEST(ColumnsRoundTrip, JiffiesGoOnlyWhenTheyChangeWhateverTheProcess) {
  // Rows: jiffies 100 (sent), none (nothing), 100 of another process (the
  // batch sent 100 already), 101 (sent), and after Clear 101 again (a new
  // batch sends afresh).
  Sample sample;
  sample.tgid = 1;
  sample.tid = 1;
  sample.tick = true;
  sample.jiffies = 100;
  Sample derived = sample;
  derived.jiffies = kDerivedJiffies;
  Sample other = sample;
  other.tgid = 2;
  other.tid = 2;
  Sample later = sample;
  later.jiffies = 101;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  for (const Sample& s : {sample, derived, other, later}) encoder.Add(s);
  const v1::SparseAttributes& attributes = batch.columns().attributes();
  ASSERT_EQ(attributes.row_size(), 2);
  EXPECT_EQ(attributes.row(0), 0u);
  EXPECT_EQ(attributes.row(1), 3u);
  EXPECT_EQ(attributes.fields(1), uint32_t{v1::ATTRIBUTE_BIT_JIFFIES});
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 4u);
  const int64_t want[] = {100, kDerivedJiffies, kDerivedJiffies, 101};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(std::get<Sample>(back[i]).jiffies, want[i]) << i;
  }
  encoder.Clear();
  encoder.Add(later);
  ASSERT_EQ(batch.columns().attributes().jiffies_size(), 1);
  EXPECT_EQ(batch.columns().attributes().jiffies(0), 101);
}

TEST(ColumnsRoundTrip, AProcessExitForgetsWhatWasSent) {
  const ProcessExit exit{.timestamp_ns = FullSample().timestamp_ns + 1,
                         .tgid = FullSample().tgid};
  Sample reused = FullSample();  // a new process with the old tgid
  reused.timestamp_ns += 2;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Add(exit);
  encoder.Add(reused);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 3u);
  // The exit forgets the process's attributes, not the jiffies, which are
  // no process's: the batch sent them already.
  Sample reused_read = reused;
  reused_read.jiffies = kDerivedJiffies;
  ExpectSameSample(std::get<Sample>(back[2]), reused_read);
}

TEST(ColumnsRoundTrip, AProcessStartForgetsWhatWasSent) {
  // An exec: the server forgets the tracked process, so the encoder sends
  // the process's attributes again with its next sample.
  const ProcessStart start{.timestamp_ns = FullSample().timestamp_ns + 1,
                           .tgid = FullSample().tgid};
  Sample after = FullSample();
  after.timestamp_ns += 2;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Add(start);
  encoder.Add(after);
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(std::get<ProcessStart>(back[1]).timestamp_ns, start.timestamp_ns);
  EXPECT_EQ(std::get<ProcessStart>(back[1]).tgid, start.tgid);
  Sample after_read = after;
  after_read.jiffies = kDerivedJiffies;  // no process's: sent already
  ExpectSameSample(std::get<Sample>(back[2]), after_read);
}

TEST(ColumnsRoundTrip, AProcessExitForgetsAllItsThreadsAndNoOtherOnes) {
  Sample second_thread = FullSample();
  second_thread.tid = 44;
  // Process 50's thread has tid 42, the exiting process's tgid, so an exit
  // that forgot threads by tid rather than by process would forget it.
  Sample other_process = FullSample();
  other_process.tgid = 50;
  other_process.tid = FullSample().tgid;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  encoder.Add(FullSample());
  encoder.Add(second_thread);
  encoder.Add(other_process);
  encoder.Add(ProcessExit{.timestamp_ns = FullSample().timestamp_ns,
                          .tgid = FullSample().tgid});
  encoder.Add(FullSample());
  encoder.Add(second_thread);
  encoder.Add(other_process);
  const v1::SparseAttributes& attributes = batch.columns().attributes();
  // Rows 0-2 send what is new; after the exit, rows 4 and 5 (process 42
  // again, both threads) send it again, row 6 (process 50) nothing, so it
  // has no entry.
  ASSERT_EQ(attributes.row_size(), 5);
  EXPECT_EQ(attributes.row(3), 4u);
  EXPECT_EQ(attributes.row(4), 5u);
  EXPECT_EQ(attributes.fields(4), uint32_t{v1::ATTRIBUTE_BIT_NUMA_NODE});
  const std::vector<Event> back = RoundTrip(batch);
  ASSERT_EQ(back.size(), 7u);
  Sample again_read = FullSample();
  again_read.jiffies = kDerivedJiffies;  // sent once, in row 0
  ExpectSameSample(std::get<Sample>(back[4]), again_read);
  Sample second_thread_read = Unchanged(second_thread);
  second_thread_read.numa_node = second_thread.numa_node;
  ExpectSameSample(std::get<Sample>(back[5]), second_thread_read);
  ExpectSameSample(std::get<Sample>(back[6]), Unchanged(other_process));
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
  EXPECT_EQ(sample.jiffies, kDerivedJiffies);
  event.set_jiffies(0);  // set: jiffy 0, not derived
  EXPECT_EQ(SampleFromEvent(event).jiffies, 0);
}

TEST(EventFromProto, LongCommIsTruncatedLikeTheKernel) {
  v1::Event event;
  event.set_comm("a-very-long-process-name");
  EXPECT_EQ(SampleFromEvent(event).comm.view(), "a-very-long-pro");
}

}  // namespace
}  // namespace schedcache
