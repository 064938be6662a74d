#include "host/live_converter.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/trace_replay.h"

namespace schedcache::host {
namespace {

// Thread ids no live process has (above this machine's tasks, below
// pid_max), so TgidCache finds them gone and files each under its own pid.
constexpr int kA = 4190001;
constexpr int kB = 4190002;

RawSchedEvent Switch(uint64_t t, int cpu, int prev, int next,
                     const char* next_comm) {
  RawSchedEvent e;
  e.kind = SchedEventKind::kSwitch;
  e.timestamp_ns = t;
  e.cpu = cpu;
  e.prev_pid = prev;
  e.prev_state = 1;
  e.next_pid = next;
  std::snprintf(e.next_comm.data(), e.next_comm.size(), "%s", next_comm);
  return e;
}

TEST(LiveConverter, MergesCpusByTimeAndHoldsRecordsPastTheHorizon) {
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, nullptr);
  // The reader hands over CPU 1's records, then CPU 0's.
  converter.OnEvent(Switch(2'000'000, 1, 0, kB, "b"));
  converter.OnEvent(Switch(9'000'000, 1, kB, 0, "swapper/1"));
  converter.OnEvent(Switch(1'000'000, 0, 0, kA, "a"));
  converter.OnEvent(Switch(3'000'000, 0, kA, 0, "swapper/0"));
  ASSERT_TRUE(converter.Release(/*horizon_ns=*/5'000'000).ok());
  EXPECT_EQ(converter.converted(), 3u);
  EXPECT_EQ(converter.held(), 1u);  // 9 ms waits for the next round
  const std::vector<HandOver> hand_overs = sink.HandOvers();
  ASSERT_EQ(hand_overs.size(), 3u);
  EXPECT_EQ(hand_overs[0].timestamp_ns, 1'000'000);
  EXPECT_EQ(hand_overs[0].tid, kA);
  EXPECT_EQ(hand_overs[0].tgid, kA);  // gone: its own pid
  EXPECT_EQ(hand_overs[1].timestamp_ns, 2'000'000);
  EXPECT_EQ(hand_overs[2].timestamp_ns, 3'000'000);
  ASSERT_TRUE(converter.Finish().ok());
  // CPU 0: 1..3 ms = 2 ms. CPU 1: 2..9 ms = 7 ms, cut by ticks at 4 and 8.
  EXPECT_THAT(converter.runtime_ns(),
              ::testing::ElementsAre(2'000'000, 7'000'000));
  EXPECT_EQ(converter.counters().tick_samples, 2);
}

TEST(LiveConverter, ARecordBehindTheConvertedOnesIsCountedLate) {
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, nullptr);
  converter.OnEvent(Switch(5'000'000, 0, 0, kA, "a"));
  ASSERT_TRUE(converter.Release(6'000'000).ok());
  converter.OnEvent(Switch(4'000'000, 1, 0, kB, "b"));
  ASSERT_TRUE(converter.Release(7'000'000).ok());
  EXPECT_EQ(converter.late(), 1u);
  EXPECT_EQ(converter.converted(), 1u);
  EXPECT_EQ(sink.HandOvers().size(), 1u);
}

// DecisionSink records the order of hand-overs ("H<tid>@t") and kernel
// decisions ("D<tid>@t").
class DecisionSink : public RecordingSink {
 public:
  absl::Status OnHandOver(const HandOver& h) override {
    order.push_back(absl::StrCat("H", h.tid, "@", h.timestamp_ns));
    return RecordingSink::OnHandOver(h);
  }
  absl::Status OnKernelDecision(const KernelDecision& d) override {
    order.push_back(absl::StrCat("D", d.tid, "@", d.timestamp_ns));
    return absl::OkStatus();
  }
  std::vector<std::string> order;
};

KernelDecision Decision(int64_t t, int cpu, int tid) {
  return KernelDecision{.timestamp_ns = t, .cpu = cpu, .tgid = tid,
                        .tid = tid, .preferred_cpu = 1};
}

// Decisions merge with the tracepoint records by time, wait for the
// horizon like them, and one behind the converted ones is late.
TEST(LiveConverter, MergesKernelDecisionsByTimeAndCountsALateOne) {
  DecisionSink sink;
  LiveConverter converter(/*hz=*/250, sink, nullptr);
  converter.OnDecision(Decision(2'500'000, 0, kA));
  converter.OnDecision(Decision(8'000'000, 0, kA));  // past the horizon
  converter.OnEvent(Switch(1'000'000, 0, 0, kA, "a"));
  converter.OnEvent(Switch(3'000'000, 0, kA, 0, "swapper/0"));
  ASSERT_TRUE(converter.Release(/*horizon_ns=*/5'000'000).ok());
  EXPECT_EQ(converter.held(), 1u);
  EXPECT_EQ(sink.order, (std::vector<std::string>{
                            absl::StrCat("H", kA, "@1000000"),
                            absl::StrCat("D", kA, "@2500000"),
                            "H0@3000000"}));
  converter.OnDecision(Decision(4'000'000, 0, kA));  // after 3 ms: in time
  converter.OnDecision(Decision(2'000'000, 0, kA));  // behind 3 ms: late
  ASSERT_TRUE(converter.Finish().ok());
  EXPECT_EQ(converter.late(), 1u);
  EXPECT_EQ(converter.decisions(), 3u);
  EXPECT_EQ(sink.order.back(), absl::StrCat("D", kA, "@8000000"));
}

// The text output replays through trace replay to the runtime the live
// conversion emitted: one state machine, both paths.
TEST(LiveConverter, WrittenTraceReplaysToTheSameRuntime) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) /
       absl::StrCat("live_converter_test_", getpid(), ".trace"))
          .string();
  absl::StatusOr<std::unique_ptr<FtraceWriter>> trace =
      FtraceWriter::Open(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, trace->get());
  converter.OnEvent(Switch(1'000'000, 0, 0, kA, "a"));
  converter.OnEvent(Switch(6'500'000, 0, kA, kB, "b"));
  RawSchedEvent migrate;
  migrate.kind = SchedEventKind::kMigrate;
  migrate.timestamp_ns = 7'000'000;
  migrate.cpu = 1;
  migrate.pid = kA;
  migrate.orig_cpu = 0;
  migrate.dest_cpu = 1;
  converter.OnEvent(migrate);
  RawSchedEvent exit;
  exit.kind = SchedEventKind::kExit;
  exit.timestamp_ns = 8'000'000;
  exit.cpu = 0;
  exit.pid = kB;
  exit.group_dead = true;
  converter.OnEvent(exit);
  converter.OnEvent(Switch(9'000'000, 0, kB, 0, "swapper/0"));
  ASSERT_TRUE(converter.Finish().ok());
  ASSERT_TRUE((*trace)->Close().ok());
  EXPECT_EQ((*trace)->lines(), 5);

  RecordingSink replayed;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(path, TraceOptions{}, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->switch_events, 3);
  EXPECT_EQ(stats->migrate_events, 1);
  EXPECT_EQ(stats->exit_events, 1);
  // CPU 0 ran a from 1 ms to 6.5 ms and b to 9 ms: 8 ms in all.
  EXPECT_EQ(converter.runtime_ns()[0], 8'000'000);
  EXPECT_EQ(stats->runtime_ns[0], converter.runtime_ns()[0]);
  EXPECT_EQ(stats->samples, converter.counters().samples);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace schedcache::host
