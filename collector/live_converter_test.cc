#include "collector/live_converter.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <variant>
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

// TempTracePath is a file of this test process's own under the test's
// temporary directory, named by `prefix`.
std::string TempTracePath(const std::string& prefix) {
  return (std::filesystem::path(::testing::TempDir()) /
          absl::StrCat(prefix, getpid(), ".trace"))
      .string();
}

// The text output replays through trace replay to the runtime the live
// conversion emitted: one state machine, both paths.
TEST(LiveConverter, WrittenTraceReplaysToTheSameRuntime) {
  const std::string path = TempTracePath("live_converter_test_");
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

// Kernel ticks replace the grid live as in replay of the written text. a
// runs on CPU 0 from 1 to 9 ms; HZ 250 would tick it at 4 and 8 ms, the
// kernel ticked it at 2.3 and 5.9 ms (the tick at 7 ms names b, which CPU 0
// is not running: unmatched). Samples: ticks at 2.3 ms (delta 1.3 ms) and
// 5.9 ms (3.6 ms), the switch-out at 9 ms (3.1 ms).
TEST(LiveConverter, KernelTicksTickThereLiveAndInTheWrittenText) {
  const std::string path = TempTracePath("live_converter_ticks_test_");
  absl::StatusOr<std::unique_ptr<FtraceWriter>> trace =
      FtraceWriter::Open(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, trace->get());
  // The second tick of kA says its NUMA attributes; the others do not.
  converter.OnTick(KernelTick{.timestamp_ns = 5'900'000, .cpu = 0,
                              .tgid = kA, .tid = kA, .jiffies = 3,
                              .numa_node = 1, .footprint_pages = 16095});
  converter.OnTick(KernelTick{.timestamp_ns = 2'300'000, .cpu = 0,
                              .tgid = kA, .tid = kA, .jiffies = 2});
  converter.OnTick(KernelTick{.timestamp_ns = 7'000'000, .cpu = 0,
                              .tgid = kB, .tid = kB, .jiffies = 3});
  converter.OnEvent(Switch(1'000'000, 0, 0, kA, "a"));
  converter.OnEvent(Switch(9'000'000, 0, kA, 0, "swapper/0"));
  ASSERT_TRUE(converter.Finish().ok());
  ASSERT_TRUE((*trace)->Close().ok());
  EXPECT_EQ((*trace)->lines(), 5);
  EXPECT_EQ(converter.ticks(), 3u);
  EXPECT_EQ(converter.counters().unmatched_ticks, 1);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 3u);
  const int64_t want_t[] = {2'300'000, 5'900'000, 9'000'000};
  const int64_t want_delta[] = {1'300'000, 3'600'000, 3'100'000};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].delta_ns, want_delta[i]) << i;
    EXPECT_EQ(samples[i].tick, i < 2) << i;
  }
  EXPECT_EQ(samples[1].numa_node, 1);
  EXPECT_EQ(samples[1].footprint_pages, 16095);
  EXPECT_EQ(samples[0].numa_node, kUnchangedNumaNode);
  EXPECT_EQ(samples[0].footprint_pages, kUnchangedFootprint);

  RecordingSink replayed;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(path, TraceOptions{}, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->kernel_ticks, 3);
  EXPECT_EQ(stats->unmatched_ticks, 1);
  const std::vector<Sample> again = replayed.Samples();
  ASSERT_EQ(again.size(), samples.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].timestamp_ns, samples[i].timestamp_ns) << i;
    EXPECT_EQ(again[i].delta_ns, samples[i].delta_ns) << i;
    EXPECT_EQ(again[i].numa_node, samples[i].numa_node) << i;
    EXPECT_EQ(again[i].footprint_pages, samples[i].footprint_pages) << i;
  }
  std::filesystem::remove(path);
}

RawSchedEvent NewTask(uint64_t t, int cpu, int creator, int child,
                      uint64_t clone_flags, const char* comm) {
  RawSchedEvent e;
  e.kind = SchedEventKind::kNewTask;
  e.timestamp_ns = t;
  e.cpu = cpu;
  e.parent_pid = creator;
  e.child_pid = child;
  e.clone_flags = clone_flags;
  std::snprintf(e.child_comm.data(), e.child_comm.size(), "%s", comm);
  return e;
}

RawSchedEvent Exit(uint64_t t, int cpu, int pid, bool group_dead) {
  RawSchedEvent e;
  e.kind = SchedEventKind::kExit;
  e.timestamp_ns = t;
  e.cpu = cpu;
  e.pid = pid;
  e.group_dead = group_dead;
  return e;
}

// Tids no live process has: /proc knows none of them, as for threads that
// exited before the converter, seconds behind the kernel, met them.
constexpr int kShell = 4190010, kProc = 4190011, kThread = 4190012,
              kThreadOfThread = 4190013, kForkOfThread = 4190014;
// The clone flags of glibc's pthread_create and fork (thread_table_test
// spells them out).
constexpr uint64_t kPthreadCreate = 0x3d0f00, kFork = 0x1200011;

// ProcessesOf maps each thread the events name to the processes they file it
// under.
std::map<int32_t, std::set<int32_t>> ProcessesOf(const RecordingSink& sink) {
  std::map<int32_t, std::set<int32_t>> processes;
  for (const Sample& s : sink.Samples()) processes[s.tid].insert(s.tgid);
  for (const HandOver& h : sink.HandOvers()) {
    if (h.tid != 0) processes[h.tid].insert(h.tgid);
  }
  return processes;
}

// StartsOf is the text of each ProcessStart of `sink`, in order.
std::vector<std::string> StartsOf(const RecordingSink& sink) {
  std::vector<std::string> starts;
  for (const RecordingSink::Event& e : sink.events()) {
    if (std::holds_alternative<ProcessStart>(e)) starts.push_back(EventText(e));
  }
  return starts;
}

// The shell forks a process that execs spin, whose thread creates a thread
// and forks a process; the threads exit. No tid is in /proc, yet each is
// filed under its process from its first event, and the written text
// replays to the same process of every thread.
TEST(LiveConverter, NewTasksJoinTheirProcessWithoutProcAndReplaySo) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) /
       absl::StrCat("live_converter_new_tasks_", getpid(), ".trace"))
          .string();
  absl::StatusOr<std::unique_ptr<FtraceWriter>> trace =
      FtraceWriter::Open(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, trace->get());
  constexpr uint64_t kMsNs = 1'000'000;
  constexpr int64_t kDead = 16;  // prev_state X
  RawSchedEvent exec;
  exec.kind = SchedEventKind::kExec;
  exec.timestamp_ns = 2'500'000;
  exec.cpu = 0;
  exec.pid = kProc;
  exec.old_pid = kProc;
  exec.filename = "/bin/spin";
  RawSchedEvent thread_out = Switch(4'100'000, 1, kThread, kThreadOfThread,
                                    "spin");
  thread_out.prev_state = kDead;
  for (const RawSchedEvent& e : {
           Switch(1 * kMsNs, 0, 0, kShell, "sh"),
           NewTask(1'500'000, 0, kShell, kProc, kFork, "sh"),
           Switch(2 * kMsNs, 0, kShell, kProc, "sh"),
           exec,
           NewTask(3 * kMsNs, 0, kProc, kThread, kPthreadCreate, "spin"),
           Switch(3'200'000, 1, 0, kThread, "spin"),
           NewTask(3'500'000, 1, kThread, kThreadOfThread, kPthreadCreate,
                   "spin"),
           NewTask(3'700'000, 1, kThread, kForkOfThread, kFork, "spin"),
           Exit(4 * kMsNs, 1, kThread, false),
           thread_out,
           Switch(5 * kMsNs, 0, kProc, kForkOfThread, "spin"),
           Switch(6 * kMsNs, 1, kThreadOfThread, 0, "swapper/1"),
           Switch(7 * kMsNs, 0, kForkOfThread, 0, "swapper/0"),
       }) {
    converter.OnEvent(e);
  }
  ASSERT_TRUE(converter.Finish().ok());
  ASSERT_TRUE((*trace)->Close().ok());

  using Processes = std::set<int32_t>;
  const std::map<int32_t, Processes> live = ProcessesOf(sink);
  EXPECT_EQ(live.at(kShell), Processes{kShell});  // older: its own pid
  EXPECT_EQ(live.at(kProc), Processes{kProc});
  EXPECT_EQ(live.at(kThread), Processes{kProc});
  EXPECT_EQ(live.at(kThreadOfThread), Processes{kProc});
  EXPECT_EQ(live.at(kForkOfThread), Processes{kForkOfThread});
  // The process's tick at 4 ms runs spin, exec'd at 2.5 ms from sh.
  for (const Sample& s : sink.Samples()) {
    if (s.tid == kProc && s.tick) {
      EXPECT_EQ(s.comm.view(), "spin");
    }
  }

  // A group starts at each fork (a new mm) and at the exec, not at a
  // pthread_create.
  const std::vector<std::string> starts = {
      absl::StrCat("start 1500000 ", kProc),
      absl::StrCat("start 2500000 ", kProc),
      absl::StrCat("start 3700000 ", kForkOfThread)};
  EXPECT_EQ(StartsOf(sink), starts);

  RecordingSink replayed;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(path, TraceOptions{}, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->new_task_events, 4);
  EXPECT_EQ(stats->exec_events, 1);
  EXPECT_EQ(ProcessesOf(replayed), live);
  EXPECT_EQ(StartsOf(replayed), starts);
  EXPECT_EQ(stats->samples, converter.counters().samples);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace schedcache::host
