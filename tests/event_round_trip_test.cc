// The client's Sample/HandOver -> Event conversion and the server's Event
// -> Sample/HandOver conversion are inverses, "unchanged" markers included.
#include "client/lib/event_convert.h"
#include "gtest/gtest.h"
#include "server/proto_convert.h"

namespace schedcache {
namespace {

TEST(EventRoundTrip, SampleWithEveryFieldSet) {
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
  v1::Event event;
  client::SampleToEvent(sample, event);
  EXPECT_FALSE(event.handover());
  const Sample back = SampleFromEvent(event);
  EXPECT_EQ(back.timestamp_ns, sample.timestamp_ns);
  EXPECT_EQ(back.cpu, sample.cpu);
  EXPECT_EQ(back.tgid, sample.tgid);
  EXPECT_EQ(back.tid, sample.tid);
  EXPECT_EQ(back.delta_ns, sample.delta_ns);
  EXPECT_TRUE(back.tick);
  EXPECT_EQ(back.nr_threads, 8);
  EXPECT_EQ(back.numa_node, -1);
  EXPECT_EQ(back.footprint_pages, 0);
  EXPECT_EQ(back.comm.view(), "redis-server");
}

TEST(EventRoundTrip, UnchangedFieldsStayUnset) {
  Sample sample;
  sample.tgid = 1;
  sample.tid = 1;
  v1::Event event;
  client::SampleToEvent(sample, event);
  EXPECT_FALSE(event.has_nr_threads());
  EXPECT_FALSE(event.has_numa_node());
  EXPECT_FALSE(event.has_footprint_pages());
  EXPECT_TRUE(event.comm().empty());
  const Sample back = SampleFromEvent(event);
  EXPECT_EQ(back.nr_threads, kUnchangedNrThreads);
  EXPECT_EQ(back.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(back.footprint_pages, kUnchangedFootprint);
  EXPECT_TRUE(back.comm.empty());
}

TEST(EventRoundTrip, HandOver) {
  const HandOver idle{.timestamp_ns = 9, .cpu = 3, .tgid = 0, .tid = 0};
  v1::Event event;
  client::HandOverToEvent(idle, event);
  EXPECT_TRUE(event.handover());
  const HandOver back = HandOverFromEvent(event);
  EXPECT_EQ(back.timestamp_ns, 9);
  EXPECT_EQ(back.cpu, 3);
  EXPECT_EQ(back.tgid, 0);
  EXPECT_EQ(back.tid, 0);
}

TEST(EventFromProto, LongCommIsTruncatedLikeTheKernel) {
  v1::Event event;
  event.set_comm("a-very-long-process-name");
  EXPECT_EQ(SampleFromEvent(event).comm.view(), "a-very-long-pro");
}

}  // namespace
}  // namespace schedcache
