#include "trace/trace_replay.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;

// A topology of `n` CPUs (0..n-1) in one LLC.
Topology MakeTopology(int n) {
  TopologySpec spec;
  spec.source = "test";
  CacheSpec llc;
  for (int cpu = 0; cpu < n; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu, 0, 0});
    llc.cpus.Set(cpu);
  }
  spec.llcs.push_back(llc);
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *std::move(topology);
}

// Process 100 has threads 100 and 101; 101 runs 1 ms on CPU 0, exits, and
// 100 runs 2 ms on CPU 1. The wakeup line's TGID column is the only place
// that says 101 belongs to 100 before 101 first switches out.
constexpr char kWithTgid[] = R"(# tracer: nop
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv-io next_pid=101 next_prio=120
          <idle>-0       (-------) [001] d..2.    10.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
          srv-io-101     (    100) [000] .....    10.000900: sched_process_exit: comm=srv-io pid=101 prio=120 group_dead=false
          srv-io-101     (    100) [000] d..2.    10.001000: sched_switch: prev_comm=srv-io prev_pid=101 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
             srv-100     (    100) [001] d..2.    10.002100: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
)";

// The same run without the TGID column: every thread is its own process.
constexpr char kWithoutTgid[] = R"(
          <idle>-0       [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv-io next_pid=101 next_prio=120
          <idle>-0       [001] d..2.    10.000100: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
          srv-io-101     [000] d..2.    10.001000: sched_switch: prev_comm=srv-io prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
             srv-100     [001] d..2.    10.002100: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
)";

// `trace-cmd report` layout with the sched plugin's switch format.
constexpr char kTraceCmd[] = R"(cpus=2
          <idle>-0     [000]    10.000000: sched_switch:         swapper/0:0 [120] R ==> srv-io:101 [120]
          <idle>-0     [001]    10.000100: sched_switch:         swapper/1:0 [120] R ==> srv:100 [120]
          srv-io-101   [000]    10.001000: sched_switch:         srv-io:101 [120] S ==> swapper/0:0 [120]
             srv-100   [001]    10.002100: sched_switch:         srv:100 [120] S ==> swapper/1:0 [120]
)";

// The same run as `perf script` prints it (tid column, "sched:" system).
constexpr char kPerfScript[] = R"(
         swapper     0 [000]    10.000000: sched:sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv-io next_pid=101 next_prio=120
         swapper     0 [001]    10.000100: sched:sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
          srv-io   101 [000]    10.001000: sched:sched_switch: prev_comm=srv-io prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
             srv   100 [001]    10.002100: sched:sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
)";

absl::StatusOr<ReplayStats> Replay(std::string_view text, RecordingSink& sink,
                                   const TraceOptions& options = {}) {
  return ReplayTraceText(text, options, sink);
}

TEST(TraceReplay, WithTgidColumnFilesThreadsUnderTheirProcess) {
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(kWithTgid, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->switch_events, 4);
  EXPECT_EQ(stats->exit_events, 1);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].tid, 101);
  EXPECT_EQ(samples[0].tgid, 100);
  EXPECT_EQ(samples[0].delta_ns, kMs);
  EXPECT_EQ(samples[0].comm.view(), "srv-io");
  EXPECT_EQ(samples[0].nr_threads, 1);  // 101 exited; 100 still lives
  EXPECT_EQ(samples[1].tid, 100);
  EXPECT_EQ(samples[1].tgid, 100);
  EXPECT_EQ(samples[1].delta_ns, 2 * kMs);
  EXPECT_EQ(stats->runtime_ns, (std::vector<int64_t>{kMs, 2 * kMs}));
}

TEST(TraceReplay, WithoutTgidColumnUsesThePidAsTgid) {
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(kWithoutTgid, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].tgid, 101);
  EXPECT_EQ(samples[0].nr_threads, 1);
  EXPECT_EQ(samples[1].tgid, 100);
  const std::vector<HandOver> hand_overs = sink.HandOvers();
  ASSERT_EQ(hand_overs.size(), 4u);
  EXPECT_EQ(hand_overs[0].tgid, 101);
  EXPECT_EQ(hand_overs[0].tid, 101);
  EXPECT_EQ(hand_overs[2].tgid, 0);  // idle
}

TEST(TraceReplay, TraceCmdReportGivesTheSameEventsAsFtrace) {
  RecordingSink ftrace, trace_cmd;
  ASSERT_TRUE(Replay(kWithoutTgid, ftrace).ok());
  absl::StatusOr<ReplayStats> stats = Replay(kTraceCmd, trace_cmd);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  ASSERT_EQ(ftrace.events().size(), trace_cmd.events().size());
  const std::vector<Sample> a = ftrace.Samples(), b = trace_cmd.Samples();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].timestamp_ns, b[i].timestamp_ns);
    EXPECT_EQ(a[i].tid, b[i].tid);
    EXPECT_EQ(a[i].delta_ns, b[i].delta_ns);
    EXPECT_EQ(a[i].comm.view(), b[i].comm.view());
  }
}

TEST(TraceReplay, PerfScriptGivesTheSameEventsAsFtrace) {
  RecordingSink ftrace, perf;
  ASSERT_TRUE(Replay(kWithoutTgid, ftrace).ok());
  absl::StatusOr<ReplayStats> stats = Replay(kPerfScript, perf);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->switch_events, 4);
  // 101 runs 10.000000..10.001000 and 100 runs 10.000100..10.002100.
  ASSERT_EQ(stats->runtime_ns.size(), 2u);
  EXPECT_EQ(stats->runtime_ns[0], 1 * kMs);
  EXPECT_EQ(stats->runtime_ns[1], 2 * kMs);
  ASSERT_EQ(ftrace.events().size(), perf.events().size());
  const std::vector<Sample> a = ftrace.Samples(), b = perf.Samples();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].timestamp_ns, b[i].timestamp_ns);
    EXPECT_EQ(a[i].tid, b[i].tid);
    EXPECT_EQ(a[i].delta_ns, b[i].delta_ns);
  }
}

TEST(TraceReplay, ReadsGzipAndPlainFilesAlike) {
  const std::string dir = ::testing::TempDir();
  const std::string gz = dir + "/replay_test.trace.txt";  // name says nothing
  const std::string plain = dir + "/replay_test.trace.gz";
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_GT(gzputs(out, kWithTgid), 0);
  gzclose(out);
  std::FILE* f = std::fopen(plain.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(kWithTgid, f);
  std::fclose(f);

  RecordingSink from_gz, from_plain;
  absl::StatusOr<ReplayStats> a = ReplayTraceFile(gz, {}, from_gz);
  absl::StatusOr<ReplayStats> b = ReplayTraceFile(plain, {}, from_plain);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->lines, b->lines);
  EXPECT_EQ(a->samples, 2);
  EXPECT_EQ(b->samples, 2);
  EXPECT_EQ(from_gz.events().size(), from_plain.events().size());
}

TEST(TraceReplay, MissingFileIsNotFound) {
  RecordingSink sink;
  EXPECT_EQ(ReplayTraceFile("/nonexistent/trace", {}, sink).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(TraceReplay, CountsMalformedLinesAndKeepsTheFirstWithLineNumbers) {
  std::string text = kWithoutTgid;  // 5 lines, the first empty
  for (int i = 0; i < 7; ++i) {
    text += "  x-1 [000] d..2. 11.0: sched_switch: prev_comm=x prev_pid=oops\n";
  }
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 7);
  ASSERT_EQ(stats->first_malformed.size(), ReplayStats::kKeptMalformed);
  EXPECT_EQ(stats->first_malformed[0].line_number, 6);
  EXPECT_EQ(stats->first_malformed[4].line_number, 10);
  EXPECT_FALSE(stats->first_malformed[0].error.empty());
  EXPECT_EQ(stats->switch_events, 4);
}

TEST(TraceReplay, TimeGoingBackwardsIsMalformed) {
  std::string text = kWithoutTgid;
  text += "  x-1 [000] d..2. 9.0: sched_switch: prev_comm=x prev_pid=0 "
          "prev_prio=1 prev_state=R ==> next_comm=y next_pid=5 next_prio=1\n";
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 1);
}

TEST(TraceReplay, SkipsLinesThatAreNotSchedulerEvents) {
  std::string text = "version = 6\n";
  // In time order, as ftrace writes them: before the first switch.
  text += "  bash-7 [000] d.h1. 9.999950: irq_handler_entry: irq=1 name=x\n";
  text += "  bash-7 [000] ..... 9.999960: sched_wakeup: comm=a pid=9 "
          "prio=120 target_cpu=000\n";
  text += "[LOST 3 EVENTS]\n";
  text += kWithoutTgid;
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->sched_events, 4);
  EXPECT_EQ(stats->samples, 2);
}

TEST(TraceReplay, CountsMigrationsAndExits) {
  std::string text = kWithTgid;
  text += "  <idle>-0 (-------) [001] d.s4. 10.003000: sched_migrate_task: "
          "comm=srv pid=100 prio=120 orig_cpu=1 dest_cpu=0\n";
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->migrate_events, 1);
  EXPECT_EQ(stats->exit_events, 1);
  EXPECT_EQ(stats->sched_events, 6);
}

TEST(TraceReplay, EmitsTicksEveryOneOverHzWhileAThreadRuns) {
  // srv (100) runs from 10.000100 to 10.002100 on CPU 1; at HZ 1000 the grid
  // points inside are 10.001 and 10.002: two ticks of 0.9 ms and 1 ms, then
  // the switch-out with the last 0.1 ms. srv-io runs 10.000 to 10.001 on
  // CPU 0: the 10.001 grid point is its switch-out, so no tick.
  TraceOptions options;
  options.hz = 1000;
  RecordingSink sink;
  ASSERT_TRUE(Replay(kWithTgid, sink, options).ok());
  std::vector<Sample> srv;
  for (const Sample& s : sink.Samples()) {
    if (s.tid == 100) srv.push_back(s);
  }
  ASSERT_EQ(srv.size(), 3u);
  EXPECT_TRUE(srv[0].tick);
  EXPECT_EQ(srv[0].timestamp_ns, 10'001'000'000);
  EXPECT_EQ(srv[0].delta_ns, 900'000);
  EXPECT_TRUE(srv[1].tick);
  EXPECT_EQ(srv[1].delta_ns, kMs);
  EXPECT_FALSE(srv[2].tick);
  EXPECT_EQ(srv[2].delta_ns, 100'000);
}

TEST(TraceReplay, CpuOutsideTheTopologyIsAnErrorUnlessMapped) {
  const Topology one_cpu = MakeTopology(1);
  TraceOptions options;
  options.topology = &one_cpu;
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(kWithTgid, sink, options);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("cpu 1"), std::string::npos)
      << stats.status();

  const Topology eight = MakeTopology(8);
  options.topology = &eight;
  options.cpu_map = *CpuMap::Parse("0=4,1=7");
  RecordingSink mapped;
  stats = Replay(kWithTgid, mapped, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cpus_seen.ToString(), "4,7");
  for (const Sample& s : mapped.Samples()) {
    EXPECT_TRUE(s.cpu == 4 || s.cpu == 7) << s.cpu;
  }
}

TEST(TraceReplay, AJumpOfMoreThanAnHourIsMalformedAndTicksNothing) {
  // One corrupted seconds digit: 10.000900 read as 99990.000900, while srv
  // runs on CPU 1. Replayed, it would tick srv every 4 ms through 27 hours
  // (25 million samples) and make every later line go back in time.
  std::string text = kWithTgid;
  const size_t exit_at = text.find("10.000900");
  ASSERT_NE(exit_at, std::string::npos);
  text.replace(exit_at, 9, "99990.000900");
  RecordingSink corrupted, clean;
  absl::StatusOr<ReplayStats> stats = Replay(text, corrupted);
  absl::StatusOr<ReplayStats> reference = Replay(kWithTgid, clean);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_EQ(stats->malformed_lines, 1);
  ASSERT_EQ(stats->first_malformed.size(), 1u);
  EXPECT_EQ(stats->first_malformed[0].line_number, 5);
  EXPECT_NE(stats->first_malformed[0].error.find("more than 3600 s"),
            std::string::npos);
  // Only the exit line is lost (srv-io then counts as alive to its end):
  // the same samples as the clean replay, up to the same end.
  EXPECT_EQ(stats->samples, reference->samples);
  EXPECT_EQ(stats->last_timestamp_ns, reference->last_timestamp_ns);
}

TEST(TraceReplay, AGapOfExactlyAnHourIsReplayedTickByTick) {
  // At HZ 1, thread 5 runs from 10 s to 3610 s: ticks at 11, 12, ... 3609
  // (3599 grid points strictly inside), then its switch-out.
  const std::string text =
      "  <idle>-0 [000] d..2. 10.000000000: sched_switch: prev_comm=swapper "
      "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=5 "
      "next_prio=120\n"
      "  w-5 [000] d..2. 3610.000000000: sched_switch: prev_comm=w prev_pid=5 "
      "prev_prio=120 prev_state=S ==> next_comm=swapper next_pid=0 "
      "next_prio=120\n";
  TraceOptions options;
  options.hz = 1;
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->tick_samples, 3599);
  EXPECT_EQ(stats->samples, 3600);
}

TEST(TraceReplay, ALineBeforeAnEarlierOtherEventFarAheadIsMalformed) {
  // A fuzz finding: a line of another scheduler event (not replayed) at
  // 100000 s, then a switch at 10 s. Had the switch been taken, the end of
  // the replay would be 100000 s and thread 5 would tick at HZ 250 for 28
  // hours (25 million samples). It is before the previous scheduler event:
  // malformed, and nothing is replayed.
  const std::string text =
      "  <idle>-0 [000] d..2. 100000.000000000: sched_wakeup: comm=w pid=5 "
      "prio=120 target_cpu=000\n"
      "  <idle>-0 [000] d..2. 10.000000000: sched_switch: prev_comm=swapper "
      "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=5 "
      "next_prio=120\n";
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 1);
  ASSERT_EQ(stats->first_malformed.size(), 1u);
  EXPECT_EQ(stats->first_malformed[0].line_number, 2);
  EXPECT_EQ(stats->samples, 0);
}

TEST(TraceReplay, MalformedLinesAreKeptEscapedAndCut) {
  std::string text = kWithoutTgid;
  const std::string bad =
      "  x-1 [000] d..2. 11.0: sched_switch: prev_comm=\x1b[31m" +
      std::string(300, 'z') + " prev_pid=oops";
  text += bad + "\n";
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = Replay(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->first_malformed.size(), 1u);
  const std::string& kept = stats->first_malformed[0].text;
  EXPECT_EQ(kept.find('\x1b'), std::string::npos) << kept;
  EXPECT_NE(kept.find("\\x1b[31m"), std::string::npos) << kept;
  EXPECT_NE(kept.find("...\" (" + std::to_string(bad.size()) + " bytes)"),
            std::string::npos)
      << kept;
}

TEST(TraceReplay, ATruncatedGzipTraceIsDataLossNamingTheFile) {
  // 20000 copies of the two-switch run, 0.01 s apart, gzip'd and cut in
  // half: the replay must fail, not quietly replay the first half.
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    const std::string t = std::to_string(10 + i) + ".00";
    text += "  <idle>-0 [000] d..2. " + t + "0000: sched_switch: prev_comm=s "
            "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w "
            "next_pid=5 next_prio=120\n";
    text += "  w-5 [000] d..2. " + t + "5000: sched_switch: prev_comm=w "
            "prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=s "
            "next_pid=0 next_prio=120\n";
  }
  const std::string path = ::testing::TempDir() + "/replay_test.cut.gz";
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_GT(gzputs(out, text.c_str()), 0);
  gzclose(out);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = ReplayTraceFile(path, {}, sink);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(stats.status().message().find(path), std::string::npos);
  EXPECT_NE(stats.status().message().find("truncated"), std::string::npos);
}

// OrderCheckingSink checks that timestamps never decrease (globally, hence
// per CPU) without keeping the events.
class OrderCheckingSink : public EventSink {
 public:
  absl::Status OnSample(const Sample& s) override {
    Check(s.timestamp_ns);
    if (s.tgid <= 0 || s.tid <= 0) ++bad_ids_;
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver& h) override {
    Check(h.timestamp_ns);
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit& e) override {
    Check(e.timestamp_ns);
    if (e.tgid <= 0) ++bad_ids_;
    return absl::OkStatus();
  }
  absl::Status OnProcessStart(const ProcessStart& e) override {
    Check(e.timestamp_ns);
    if (e.tgid <= 0) ++bad_ids_;
    return absl::OkStatus();
  }
  int64_t backwards() const { return backwards_; }
  int64_t bad_ids() const { return bad_ids_; }

 private:
  void Check(int64_t t) {
    if (t < last_) ++backwards_;
    last_ = t;
  }
  int64_t last_ = INT64_MIN;
  int64_t backwards_ = 0;
  int64_t bad_ids_ = 0;
};

// BusyTime computes each CPU's busy time straight from the trace's
// sched_switch lines, independently of the replay: from the switch-in of a
// non-idle task to the next switch on that CPU, plus the slice still running
// at the trace's last scheduler event.
std::map<int, int64_t> BusyTime(const std::string& path) {
  std::map<int, int64_t> busy;
  std::map<int, std::pair<int64_t, bool>> since;  // cpu -> (time, non-idle)
  int64_t last = 0;
  gzFile in = gzopen(path.c_str(), "rb");
  EXPECT_NE(in, nullptr) << path;
  if (in == nullptr) return busy;
  char buf[4096];
  while (gzgets(in, buf, sizeof buf) != nullptr) {
    const std::string line(buf);
    const size_t ev = line.find(": sched_");
    if (line[0] == '#' || ev == std::string::npos) continue;
    const size_t ts_at = line.rfind(' ', ev) + 1;
    const int64_t t =
        std::llround(std::strtod(line.c_str() + ts_at, nullptr) * 1e9);
    last = t;
    if (line.compare(ev, 16, ": sched_switch: ") != 0) continue;
    const int cpu = std::atoi(line.c_str() + line.rfind('[', ts_at) + 1);
    const bool next_busy =
        std::atoi(line.c_str() + line.rfind("next_pid=") + 9) != 0;
    auto it = since.find(cpu);
    if (it != since.end() && it->second.second) busy[cpu] += t - it->second.first;
    since[cpu] = {t, next_busy};
  }
  gzclose(in);
  for (const auto& [cpu, s] : since) {
    if (s.second) busy[cpu] += last - s.first;
  }
  return busy;
}

TEST(TraceReplay, SharedTracesReplayCleanlyAndAccountEveryBusyNanosecond) {
  const std::filesystem::path dir =
      std::filesystem::path(SCHEDCACHE_SHARED_DATA_DIR) / "traces";
  if (!std::filesystem::exists(dir)) {
    GTEST_SKIP() << "shared traces not found at " << dir;
  }
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".trace.gz")) continue;
    ++replayed;
    SCOPED_TRACE(path);
    const Topology topology = MakeTopology(2);  // the capture VM's 2 vCPUs
    TraceOptions options;
    options.topology = &topology;
    OrderCheckingSink sink;
    absl::StatusOr<ReplayStats> stats = ReplayTraceFile(path, options, sink);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->malformed_lines, 0)
        << (stats->first_malformed.empty()
                ? ""
                : stats->first_malformed[0].error + ": " +
                      stats->first_malformed[0].text);
    EXPECT_EQ(sink.backwards(), 0);
    EXPECT_EQ(sink.bad_ids(), 0);
    EXPECT_GT(stats->tick_samples, 0);

    const std::map<int, int64_t> busy = BusyTime(path);
    const int64_t tick_ns = 1'000'000'000 / options.hz;
    int64_t worst = 0;
    for (const auto& [cpu, ns] : busy) {
      ASSERT_LT(static_cast<size_t>(cpu), stats->runtime_ns.size());
      const int64_t diff = std::llabs(stats->runtime_ns[cpu] - ns);
      EXPECT_LE(diff, tick_ns) << "cpu " << cpu;
      worst = std::max(worst, diff);
    }
    std::cout << entry.path().filename().string() << ": lines "
              << stats->lines << ", sched events " << stats->sched_events
              << " (switch " << stats->switch_events << "), malformed "
              << stats->malformed_lines << ", samples " << stats->samples
              << " (ticks " << stats->tick_samples << "), hand-overs "
              << stats->hand_overs << " (guessed tgid "
              << stats->guessed_tgid_hand_overs << "), prev mismatches "
              << stats->prev_mismatches << ", moved "
              << stats->moved_running_threads << ", max |replayed - busy| "
              << worst << " ns\n";
  }
  EXPECT_GT(replayed, 0) << "no *.trace.gz in " << dir;
}

}  // namespace
}  // namespace schedcache

namespace schedcache {
namespace {

// A capture as `record --output` writes it: process 100's cgroup path
// before its first line and again after its exec, one path with a blank.
constexpr char kCgroupCapture[] =
    "# schedcache_cgroup: 100 /app\\040a\n"
    "          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120\n"
    "             srv-100     (    100) [000] .....    10.001000: sched_process_exec: filename=/bin/cli pid=100 old_pid=100\n"
    "# schedcache_cgroup: 100 /b\n"
    "             cli-100     (    100) [000] d..2.    10.009000: sched_switch: prev_comm=cli prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n";

TEST(TraceReplayCgroups, PathsComeInTheirPlaceAmongTheEvents) {
  RecordingSink sink;
  std::vector<std::string> heard;
  TraceOptions options;
  // Each path with the number of events the sink had by then.
  options.on_cgroup = [&](int32_t tgid, std::string_view path) {
    heard.push_back(std::to_string(tgid) + " " + std::string(path) +
                    " after " + std::to_string(sink.events().size()));
  };
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(kCgroupCapture, options, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cgroup_lines, 2);
  EXPECT_EQ(stats->malformed_lines, 0);
  const std::vector<std::string> events = EventTexts(sink);
  // The first path before any event; the second after the exec's start
  // (the hand-over at 10.000 s and the start at 10.001 s), before the
  // samples of the new program.
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[1].substr(0, 6), "start ") << events[1];
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(heard[0], "100 /app a after 0");
  EXPECT_EQ(heard[1], "100 /b after 2");
}

TEST(TraceReplayCgroups, CgroupLinesChangeNoEventAndABadOneIsMalformed) {
  // The same capture without its cgroup lines gives the same events.
  std::string plain = kCgroupCapture;
  for (size_t at; (at = plain.find("# schedcache_cgroup:")) !=
                  std::string::npos;) {
    plain.erase(at, plain.find('\n', at) + 1 - at);
  }
  RecordingSink with, without;
  ASSERT_TRUE(ReplayTraceText(kCgroupCapture, TraceOptions{}, with).ok());
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(plain, TraceOptions{}, without);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->cgroup_lines, 0);
  EXPECT_EQ(EventTexts(with), EventTexts(without));

  RecordingSink sink;
  const absl::StatusOr<ReplayStats> bad = ReplayTraceText(
      "# schedcache_cgroup: 7 /a\\9\n# schedcache_cgroup: 7\n", TraceOptions{},
      sink);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ(bad->malformed_lines, 2);
  EXPECT_EQ(bad->cgroup_lines, 0);
  ASSERT_EQ(bad->first_malformed.size(), 2u);
  EXPECT_EQ(bad->first_malformed[0].line_number, 1);
  EXPECT_NE(bad->first_malformed[0].error.find("three octal digits"),
            std::string::npos);
}

}  // namespace
}  // namespace schedcache
