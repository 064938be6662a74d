// The two kernel lines replay reads for what they say about processes,
// task_newtask and sched_process_exec: parsed in the kernel's own text form
// (as Linux 6.18's format files print them), written back by FtraceWriter,
// and replayed: a new task is filed under its process from its creation,
// an exec renames the process.
#include <string>
#include <string_view>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "trace/ftrace_writer.h"
#include "trace/trace_line.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

std::string_view WithoutNewline(const std::string& line) {
  return std::string_view(line).substr(0, line.size() - 1);
}

TEST(ProcessLines, ParsesTaskNewtaskWithTheCreatorInItsHeader) {
  // pthread_create's flags (0x3d0f00 holds CLONE_THREAD, 0x10000).
  const TraceLine line = ParseTraceLine(
      "            spin-200     (    200) [001] d..1.  5.000001000: "
      "task_newtask: pid=201 comm=spin clone_flags=3d0f00 oom_score_adj=0");
  ASSERT_EQ(line.kind, Kind::kNewTask) << line.error;
  EXPECT_EQ(line.task_pid, 200);
  EXPECT_EQ(line.task_tgid, 200);
  EXPECT_EQ(line.cpu, 1);
  EXPECT_EQ(line.timestamp_ns, 5'000'001'000);
  EXPECT_EQ(line.pid, 201);
  EXPECT_EQ(line.comm, "spin");
  EXPECT_EQ(line.clone_flags, 0x3d0f00u);
}

TEST(ProcessLines, ATaskNewtaskCommMayHoldSpaces) {
  const TraceLine line = ParseTraceLine(
      "   my prog-200 [000] 5.0: task_newtask: pid=7 comm=my prog "
      "clone_flags=1200011 oom_score_adj=-1000");
  ASSERT_EQ(line.kind, Kind::kNewTask) << line.error;
  EXPECT_EQ(line.task_tgid, 0);  // no TGID column
  EXPECT_EQ(line.comm, "my prog");
  EXPECT_EQ(line.clone_flags, 0x1200011u);
}

TEST(ProcessLines, ABrokenTaskNewtaskIsMalformed) {
  for (const char* fields :
       {"pid=7 comm=a", "pid=x comm=a clone_flags=10", "pid=0 comm=a "
        "clone_flags=10", "pid=7 comm=a clone_flags=0x10",
        "comm=a pid=7 clone_flags=10"}) {
    const TraceLine line = ParseTraceLine(
        std::string("a-1 (1) [000] 5.0: task_newtask: ") + fields);
    EXPECT_EQ(line.kind, Kind::kMalformed) << fields;
    EXPECT_FALSE(line.error.empty());
  }
}

TEST(ProcessLines, ParsesSchedProcessExecAndAPathWithSpaces) {
  const TraceLine line = ParseTraceLine(
      "            spin-300     (    300) [002] .....  6.500000000: "
      "sched_process_exec: filename=/bin/spin pid=300 old_pid=300");
  ASSERT_EQ(line.kind, Kind::kExec) << line.error;
  EXPECT_EQ(line.task_pid, 300);
  EXPECT_EQ(line.filename, "/bin/spin");
  EXPECT_EQ(line.pid, 300);
  EXPECT_EQ(line.old_pid, 300);
  // A thread other than the leader exec'd: it takes the leader's pid.
  const TraceLine spaced = ParseTraceLine(
      "a-301 (300) [000] 6.0: sched_process_exec: filename=/tmp/my dir/x "
      "pid=300 old_pid=301");
  ASSERT_EQ(spaced.kind, Kind::kExec) << spaced.error;
  EXPECT_EQ(spaced.filename, "/tmp/my dir/x");
  EXPECT_EQ(spaced.pid, 300);
  EXPECT_EQ(spaced.old_pid, 301);
}

TEST(ProcessLines, ABrokenExecIsMalformed) {
  for (const char* fields :
       {"filename=/bin/x pid=3", "filename=/bin/x old_pid=3",
        "filename= pid=3 old_pid=3", "filename=/bin/x pid=3 old_pid=y",
        "file=/bin/x pid=3 old_pid=3"}) {
    const TraceLine line = ParseTraceLine(
        std::string("a-3 (3) [000] 5.0: sched_process_exec: ") + fields);
    EXPECT_EQ(line.kind, Kind::kMalformed) << fields;
  }
}

TEST(ProcessLines, WrittenLinesParseBack) {
  const std::string new_task =
      FormatNewTaskLine(1'000, 3, TraceTask{"spin", 200, 200}, 201, "spin",
                        0x3d0f00, -1000);
  EXPECT_EQ(new_task,
            "            spin-200     (    200) [003] 0.000001000: "
            "task_newtask: pid=201 comm=spin clone_flags=3d0f00 "
            "oom_score_adj=-1000\n");
  const TraceLine n = ParseTraceLine(WithoutNewline(new_task));
  ASSERT_EQ(n.kind, Kind::kNewTask) << n.error;
  EXPECT_EQ(n.pid, 201);
  EXPECT_EQ(n.clone_flags, 0x3d0f00u);
  const std::string exec =
      FormatExecLine(2'000, 0, TraceTask{"spin", 300, 300}, "/bin/spin", 301);
  EXPECT_EQ(exec,
            "            spin-300     (    300) [000] 0.000002000: "
            "sched_process_exec: filename=/bin/spin pid=300 old_pid=301\n");
  const TraceLine e = ParseTraceLine(WithoutNewline(exec));
  ASSERT_EQ(e.kind, Kind::kExec) << e.error;
  EXPECT_EQ(e.old_pid, 301);
}

// Process 100 runs on CPU 0 and creates thread 101, which runs 1 ms on CPU
// 1 (10.001 to 10.002) and exits before any line shows its TGID column.
constexpr char kThreadCreation[] = R"(
          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
             srv-100     (    100) [000] d..1.    10.000500: task_newtask: pid=101 comm=srv clone_flags=3d0f00 oom_score_adj=0
          <idle>-0       (-------) [001] d..2.    10.001000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=101 next_prio=120
             srv-100     (    100) [000] d..2.    10.001500: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";

TEST(ProcessLines, ReplayFilesANewThreadUnderItsCreatorsProcessAtOnce) {
  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(kThreadCreation, TraceOptions{}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->new_task_events, 1);
  EXPECT_EQ(stats->malformed_lines, 0);
  // 100's own first hand-over precedes every line that shows its TGID
  // column (a thread older than the trace); 101's is not guessed.
  EXPECT_EQ(stats->guessed_tgid_hand_overs, 1);
  const std::vector<HandOver> hand_overs = sink.HandOvers();
  ASSERT_EQ(hand_overs.size(), 3u);  // 100, 101, idle
  EXPECT_EQ(hand_overs[1].tid, 101);
  EXPECT_EQ(hand_overs[1].tgid, 100);
  // 101 never switches out: the replay ends at 10.0015 with it running,
  // and no sample ever names it as a process of its own.
  for (const Sample& sample : sink.Samples()) EXPECT_EQ(sample.tgid, 100);

  // Without the task_newtask line, 101's hand-over guesses its own pid.
  std::string without(kThreadCreation);
  const size_t at = without.find("task_newtask");
  without.erase(without.rfind('\n', at) + 1,
                without.find('\n', at) - without.rfind('\n', at));
  RecordingSink guessed;
  stats = ReplayTraceText(without, TraceOptions{}, guessed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->new_task_events, 0);
  EXPECT_EQ(stats->guessed_tgid_hand_overs, 2);
  EXPECT_EQ(guessed.HandOvers()[1].tgid, 101);
}

// Shell 300 runs on CPU 0 from 10.000 and execs /bin/spin at 10.001; its
// tick at 10.004 (HZ 250) and its switch-out at 10.005 carry spin's comm.
constexpr char kExec[] = R"(
          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=300 next_prio=120
            spin-300     (    300) [000] .....    10.001000: sched_process_exec: filename=/bin/spin pid=300 old_pid=300
            spin-300     (    300) [000] d..2.    10.005000: sched_switch: prev_comm=spin prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";

TEST(ProcessLines, ReplayGivesTheProcessTheExecdCommFromTheExecOn) {
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(kExec, TraceOptions{}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->exec_events, 1);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 2u);  // the tick at 10.004, the switch-out
  EXPECT_TRUE(samples[0].tick);
  EXPECT_EQ(samples[0].timestamp_ns, 10'004'000'000);
  EXPECT_EQ(samples[0].comm.view(), "spin");
  EXPECT_EQ(samples[0].tgid, 300);
}

// Shell 300 on CPU 0 forks 301 (fork's flags, no CLONE_VM: a new mm),
// creates thread 302 (pthread_create's, CLONE_VM) and vforks 303 (0x4111:
// CLONE_VFORK | CLONE_VM | SIGCHLD, the shell's mm), then execs /bin/spin.
constexpr char kStarts[] = R"(
          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=300 next_prio=120
              sh-300     (    300) [000] d..1.    10.000200: task_newtask: pid=301 comm=sh clone_flags=1200011 oom_score_adj=0
              sh-300     (    300) [000] d..1.    10.000300: task_newtask: pid=302 comm=sh clone_flags=3d0f00 oom_score_adj=0
              sh-300     (    300) [000] d..1.    10.000400: task_newtask: pid=303 comm=sh clone_flags=4111 oom_score_adj=0
            spin-300     (    300) [000] .....    10.001000: sched_process_exec: filename=/bin/spin pid=300 old_pid=300
            spin-300     (    300) [000] d..2.    10.005000: sched_switch: prev_comm=spin prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";

TEST(ProcessLines, ReplayStartsAGroupWhereAProcessGetsANewMm) {
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(kStarts, TraceOptions{}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->new_task_events, 3);
  EXPECT_EQ(stats->exec_events, 1);
  EXPECT_EQ(stats->process_starts, 2);
  // In time order: 300's hand-over, the fork's start of 301, the exec's
  // start of 300, then 300's tick at 10.004 (HZ 250) and switch-out.
  const std::vector<std::string> texts = EventTexts(sink);
  ASSERT_GE(texts.size(), 5u);
  EXPECT_EQ(texts[0], "hand-over 10000000000 cpu 0 300/300");
  EXPECT_EQ(texts[1], "start 10000200000 301");
  EXPECT_EQ(texts[2], "start 10001000000 300");
  EXPECT_EQ(sink.Samples().front().timestamp_ns, 10'004'000'000);
}

}  // namespace
}  // namespace schedcache
