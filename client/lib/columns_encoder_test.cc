// ColumnsEncoder's rows, read back field by field: times as differences
// from the row before, each attribute sent only when the batch has not
// sent that value for the process (thread) yet, a process exit forgetting
// what was sent, and Clear starting a batch afresh. The server's decoder
// and a whole round trip are checked in tests/columns_round_trip_test.cc.
#include "client/lib/columns_encoder.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::client {
namespace {

using ::testing::ElementsAre;

Sample Tick(int64_t ts, int32_t tgid, int32_t tid, int32_t nr_threads) {
  Sample sample;
  sample.timestamp_ns = ts;
  sample.cpu = 3;
  sample.tgid = tgid;
  sample.tid = tid;
  sample.delta_ns = 7;
  sample.tick = true;
  sample.nr_threads = nr_threads;
  return sample;
}

TEST(ColumnsEncoder, TimesAreDifferencesFromTheRowBefore) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  encoder.Add(Tick(100, 1, 1, kUnchangedNrThreads));
  encoder.Add(HandOver{150, 2, 1, 1});
  encoder.Add(ProcessExit{120, 1});  // earlier than the row before: -30
  EXPECT_THAT(columns.timestamp_delta_ns(), ElementsAre(100, 50, -30));
  EXPECT_THAT(columns.kind(),
              ElementsAre(v1::EVENT_KIND_TICK, v1::EVENT_KIND_HANDOVER,
                          v1::EVENT_KIND_PROCESS_EXIT));
  // A handover and an exit account nothing; an exit names no CPU or thread.
  EXPECT_THAT(columns.delta_ns(), ElementsAre(7, 0, 0));
  EXPECT_THAT(columns.cpu(), ElementsAre(3, 2, 0));
  EXPECT_THAT(columns.tid(), ElementsAre(1, 1, 0));
  EXPECT_EQ(encoder.rows(), 3);
}

TEST(ColumnsEncoder, AnAttributeIsSentOnlyWhenItDiffersFromWhatWasSent) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  encoder.Add(Tick(1, 1, 1, 4));                    // row 0: sends 4
  encoder.Add(Tick(2, 1, 2, 4));                    // row 1: 4 already sent
  encoder.Add(Tick(3, 1, 1, kUnchangedNrThreads));  // row 2: unchanged
  encoder.Add(Tick(4, 2, 5, 4));                    // row 3: another process
  encoder.Add(Tick(5, 1, 1, 5));                    // row 4: sends 5
  const v1::SparseAttributes& attributes = columns.attributes();
  EXPECT_THAT(attributes.row(), ElementsAre(0u, 3u, 4u));
  EXPECT_THAT(attributes.nr_threads(), ElementsAre(4, 4, 5));
  for (uint32_t fields : attributes.fields()) {
    EXPECT_EQ(fields, static_cast<uint32_t>(v1::ATTRIBUTE_BIT_NR_THREADS));
  }
}

TEST(ColumnsEncoder, ANumaNodeIsPerThreadAndJiffiesOneCounterForAll) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  Sample sample = Tick(1, 1, 1, kUnchangedNrThreads);
  sample.numa_node = 0;
  sample.jiffies = 1000;
  encoder.Add(sample);  // row 0: node of thread 1, jiffies 1000
  sample.tid = 2;
  encoder.Add(sample);  // row 1: node of thread 2; jiffies already sent
  sample.tid = 1;
  sample.tgid = 9;
  encoder.Add(sample);  // row 2: thread 1 of another process
  sample.jiffies = 1001;
  encoder.Add(sample);  // row 3: jiffies only
  const v1::SparseAttributes& attributes = columns.attributes();
  EXPECT_THAT(attributes.row(), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(attributes.numa_node(), ElementsAre(0, 0, 0));
  EXPECT_THAT(attributes.jiffies(), ElementsAre(1000, 1001));
  EXPECT_EQ(attributes.fields(3),
            static_cast<uint32_t>(v1::ATTRIBUTE_BIT_JIFFIES));
}

TEST(ColumnsEncoder, AnExitForgetsWhatWasSentForTheProcess) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  Sample sample = Tick(1, 1, 1, 4);
  sample.comm = Comm("worker");
  encoder.Add(sample);  // row 0: nr_threads and comm
  encoder.Add(ProcessExit{2, 1});
  sample.timestamp_ns = 3;
  encoder.Add(sample);  // row 2: a new process with the tgid: both again
  const v1::SparseAttributes& attributes = columns.attributes();
  EXPECT_THAT(attributes.row(), ElementsAre(0u, 2u));
  EXPECT_THAT(attributes.comm(), ElementsAre("worker", "worker"));
}

TEST(ColumnsEncoder, FixedWidthSendsCommOncePerStreamUntilItChangesOrTheProcessEnds) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns, ColumnsForm::kFixedWidth);
  Sample sample = Tick(1, 1, 1, 4);
  sample.comm = Comm("worker");
  encoder.Add(sample);  // batch 1, row 0: nr_threads and comm
  EXPECT_THAT(columns.attributes().comm(), ElementsAre("worker"));
  encoder.Clear();
  sample.timestamp_ns = 2;
  encoder.Add(sample);  // batch 2, row 0: nr_threads again, comm not
  EXPECT_THAT(columns.attributes().nr_threads(), ElementsAre(4));
  EXPECT_EQ(columns.attributes().comm_size(), 0);
  sample.timestamp_ns = 3;
  sample.comm = Comm("worker-2");
  encoder.Add(sample);  // batch 2, row 1: renamed, so sent
  EXPECT_THAT(columns.attributes().comm(), ElementsAre("worker-2"));
  encoder.Clear();
  encoder.Add(ProcessStart{4, 1});  // batch 3, row 0: a new process
  sample.timestamp_ns = 5;
  encoder.Add(sample);  // batch 3, row 1: its comm again
  EXPECT_THAT(columns.attributes().comm(), ElementsAre("worker-2"));
}

TEST(ColumnsEncoder, PackedSendsCommInEveryBatch) {
  // The packed form is for servers that may not keep comms per stream.
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  Sample sample = Tick(1, 1, 1, 4);
  sample.comm = Comm("worker");
  encoder.Add(sample);
  encoder.Clear();
  sample.timestamp_ns = 2;
  encoder.Add(sample);
  EXPECT_THAT(columns.attributes().comm(), ElementsAre("worker"));
}

TEST(ColumnsEncoder, NoCacheGroupColumnWhileEveryRowIsInItsOwnGroup) {
  for (const ColumnsForm form :
       {ColumnsForm::kPacked, ColumnsForm::kFixedWidth}) {
    v1::EventColumns columns;
    ColumnsEncoder encoder(columns, form);
    encoder.Add(Tick(1, 1, 1, 4));
    encoder.Add(HandOver{2, 3, 2, 2});
    encoder.Add(ProcessExit{3, 1});
    EXPECT_EQ(columns.cache_group_size(), 0);
  }
}

TEST(ColumnsEncoder, TheFirstNamedGroupSendsTheColumnWithEveryRowBefore) {
  for (const ColumnsForm form :
       {ColumnsForm::kPacked, ColumnsForm::kFixedWidth}) {
    v1::EventColumns columns;
    ColumnsEncoder encoder(columns, form);
    encoder.Add(Tick(1, 1, 1, 4));     // row 0: own group
    encoder.Add(HandOver{2, 3, 2, 2});  // row 1: not a sample
    Sample grouped = Tick(3, 2, 2, 4);
    grouped.cache_group = 77;
    encoder.Add(grouped);               // row 2: names group 77
    encoder.Add(ProcessExit{4, 1});     // row 3
    encoder.Add(Tick(5, 1, 1, 4));      // row 4: own group again
    // One value per row from the first named group on, the rows before it
    // filled in with 0, so the column has the rows' length.
    EXPECT_THAT(columns.cache_group(), ElementsAre(0u, 0u, 77u, 0u, 0u));
    EXPECT_EQ(encoder.rows(), 5);
    // The next batch starts without the column until a row names a group.
    encoder.Clear();
    encoder.Add(Tick(6, 1, 1, 4));
    EXPECT_EQ(columns.cache_group_size(), 0);
    // A group on the batch's first row: a column from row 0.
    encoder.Clear();
    encoder.Add(grouped);
    encoder.Add(HandOver{7, 3, 2, 2});
    EXPECT_THAT(columns.cache_group(), ElementsAre(77u, 0u));
  }
}

TEST(ColumnsEncoder, ClearStartsABatchAfreshAndKeepsNothingOfTheLast) {
  v1::EventColumns columns;
  ColumnsEncoder encoder(columns);
  encoder.Add(Tick(500, 1, 1, 4));
  KernelDecision decision;
  decision.timestamp_ns = 600;
  decision.tgid = 1;
  decision.tid = 1;
  decision.preferred_cpu = 2;
  decision.scanned = true;
  encoder.Add(decision);
  ASSERT_EQ(columns.kernel_decisions().preferred_cpu_size(), 1);
  encoder.Clear();
  EXPECT_EQ(encoder.rows(), 0);
  EXPECT_EQ(columns.kernel_decisions().preferred_cpu_size(), 0);
  EXPECT_EQ(columns.attributes().row_size(), 0);
  encoder.Add(Tick(700, 1, 1, 4));
  // The whole time again, and nr_threads again, which the last batch sent.
  EXPECT_THAT(columns.timestamp_delta_ns(), ElementsAre(700));
  EXPECT_THAT(columns.attributes().nr_threads(), ElementsAre(4));
}

}  // namespace
}  // namespace schedcache::client
