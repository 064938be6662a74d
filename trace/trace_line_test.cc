#include "trace/trace_line.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

TEST(TraceLine, ReadsFtraceSwitchWithTgidColumn) {
  const TraceLine line = ParseTraceLine(
      " redis-benchmark-21883   (  21881) [001] d..2.  1218.816148: "
      "sched_switch: prev_comm=redis-benchmark prev_pid=21883 prev_prio=120 "
      "prev_state=S ==> next_comm=run_all.sh next_pid=9563 next_prio=120");
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.timestamp_ns, 1218'816148000);
  EXPECT_EQ(line.cpu, 1);
  EXPECT_EQ(line.task_pid, 21883);
  EXPECT_EQ(line.task_tgid, 21881);
  EXPECT_EQ(line.prev_comm, "redis-benchmark");
  EXPECT_EQ(line.prev_pid, 21883);
  EXPECT_EQ(line.next_comm, "run_all.sh");
  EXPECT_EQ(line.next_pid, 9563);
  EXPECT_FALSE(line.prev_runnable);  // S
}

TEST(TraceLine, ReadsFtraceSwitchWithoutTgidColumnAndSpacesInComm) {
  const TraceLine line = ParseTraceLine(
      "  Web Content-77    [003] d..2.   5.000000001: sched_switch: "
      "prev_comm=Web Content prev_pid=77 prev_prio=120 prev_state=R+ ==> "
      "next_comm=kworker/u4:1 next_pid=12 next_prio=120");
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.timestamp_ns, 5'000000001);
  EXPECT_EQ(line.cpu, 3);
  EXPECT_EQ(line.task_pid, 77);
  EXPECT_EQ(line.task_tgid, 0);
  EXPECT_EQ(line.prev_comm, "Web Content");
  EXPECT_EQ(line.next_comm, "kworker/u4:1");
  EXPECT_EQ(line.next_pid, 12);
  EXPECT_TRUE(line.prev_runnable);  // R+
}

// The keys of the kernel's switch fields are each the first of their kind
// (prev_state= and next_pid= the first after prev_pid= and after the arrow),
// wherever a comm holds text that looks like one.
TEST(TraceLine, TakesTheFirstOfEachSwitchKeyWhenCommsHoldKeyText) {
  const std::string header = "  x-1     [000]   1.5: sched_switch: ";
  // A '>' in the prev comm that is no arrow; next_pid= inside the next comm:
  // the next comm ends before it and its number is the next pid. The line's
  // comms are views into the text, which must outlive them.
  const std::string text =
      header + "prev_comm=a ==> b prev_pid=7 prev_prio=120 prev_state=R ==> "
               "next_comm=c next_pid=5 next_pid=9 next_prio=120";
  TraceLine line = ParseTraceLine(text);
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.prev_comm, "a ==> b");
  EXPECT_EQ(line.prev_pid, 7);
  EXPECT_TRUE(line.prev_runnable);
  EXPECT_EQ(line.next_comm, "c");
  EXPECT_EQ(line.next_pid, 5);

  // The whole arrow in the prev comm comes before prev_pid=.
  line = ParseTraceLine(header +
                        "prev_comm=p ==> next_comm=q prev_pid=7 prev_prio=120 "
                        "prev_state=S ==> next_comm=c next_pid=5 next_prio=1");
  ASSERT_EQ(line.kind, Kind::kMalformed);
  EXPECT_EQ(line.error, "sched_switch without prev_pid= or ==> next_comm=");

  // prev_state= only after the arrow.
  line = ParseTraceLine(header +
                        "prev_comm=a prev_pid=7 prev_prio=120 ==> next_comm=c "
                        "next_pid=5 next_prio=120 prev_state=S");
  ASSERT_EQ(line.kind, Kind::kMalformed);
  EXPECT_EQ(line.error, "sched_switch without a prev_state= before ==>");

  // A pid of 10 digits is not an int32 the parser takes.
  line = ParseTraceLine(header +
                        "prev_comm=a prev_pid=1234567890 prev_prio=120 "
                        "prev_state=S ==> next_comm=c next_pid=5 next_prio=1");
  ASSERT_EQ(line.kind, Kind::kMalformed);
  EXPECT_EQ(line.error, "sched_switch prev_pid or next_pid is not a number");
}

TEST(TraceLine, ReadsIdleTgidDashes) {
  const TraceLine line = ParseTraceLine(
      "          <idle>-0       (-------) [001] d.s4.  2187.944096: "
      "sched_migrate_task: comm=rcu_preempt pid=15 prio=120 orig_cpu=0 "
      "dest_cpu=1");
  ASSERT_EQ(line.kind, Kind::kMigrate) << line.error;
  EXPECT_EQ(line.task_pid, 0);
  EXPECT_EQ(line.task_tgid, 0);
  EXPECT_EQ(line.comm, "rcu_preempt");
  EXPECT_EQ(line.pid, 15);
  EXPECT_EQ(line.orig_cpu, 0);
  EXPECT_EQ(line.dest_cpu, 1);
}

TEST(TraceLine, ReadsTraceCmdPluginSwitch) {
  const TraceLine line = ParseTraceLine(
      "       trace-cmd-2178  [001]  8142.613602: sched_switch:         "
      "trace-cmd:2178 [120] S ==> swapper/1:0 [120]");
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.timestamp_ns, 8142'613602000);
  EXPECT_EQ(line.prev_comm, "trace-cmd");
  EXPECT_EQ(line.prev_pid, 2178);
  EXPECT_EQ(line.next_comm, "swapper/1");
  EXPECT_EQ(line.next_pid, 0);
}

// KernelSwitch is a kernel-form sched_switch of prev 5 with `state` printed
// as its prev_state.
std::string KernelSwitch(std::string_view state) {
  return std::string(
             "  a-5 [000] d..2. 1.5: sched_switch: prev_comm=a prev_pid=5 "
             "prev_prio=120 prev_state=")
      .append(state)
      .append(" ==> next_comm=b next_pid=6 next_prio=120");
}

TEST(TraceLine, ReadsPrevStateRunnableOnlyWhenItIsR) {
  // The kernel prints "R" for no state bit and "R+" when preempted
  // (TASK_REPORT_MAX); every letter it prints otherwise is a state bit.
  for (std::string_view state : {"R", "R+"}) {
    const TraceLine line = ParseTraceLine(KernelSwitch(state));
    ASSERT_EQ(line.kind, Kind::kSwitch) << state << ": " << line.error;
    EXPECT_TRUE(line.prev_runnable) << state;
  }
  for (std::string_view state : {"S", "D", "T", "t", "X", "Z", "P", "I",
                                 "S|D"}) {
    const TraceLine line = ParseTraceLine(KernelSwitch(state));
    ASSERT_EQ(line.kind, Kind::kSwitch) << state << ": " << line.error;
    EXPECT_FALSE(line.prev_runnable) << state;
  }
}

TEST(TraceLine, ReadsPrevStateOfTheSchedPlugin) {
  // trace-cmd's sched plugin prints "R" when no state bit is set.
  const TraceLine runnable = ParseTraceLine(
      "  a-5 [000] 1.5: sched_switch: a:5 [120] R ==> b:6 [120]");
  ASSERT_EQ(runnable.kind, Kind::kSwitch) << runnable.error;
  EXPECT_TRUE(runnable.prev_runnable);
  const TraceLine dead = ParseTraceLine(
      "  a-5 [000] 1.5: sched_switch: a:5 [120] X ==> b:6 [120]");
  ASSERT_EQ(dead.kind, Kind::kSwitch) << dead.error;
  EXPECT_FALSE(dead.prev_runnable);
  EXPECT_EQ(ParseTraceLine(
                "  a-5 [000] 1.5: sched_switch: a:5 [120] ==> b:6 [120]")
                .kind,
            Kind::kMalformed);
}

TEST(TraceLine, FlagsASwitchWithoutPrevState) {
  const TraceLine empty = ParseTraceLine(KernelSwitch(""));
  EXPECT_EQ(empty.kind, Kind::kMalformed);
  EXPECT_EQ(empty.error, "sched_switch without a prev_state= before ==>");
  const TraceLine missing = ParseTraceLine(
      "  a-5 [000] d..2. 1.5: sched_switch: prev_comm=a prev_pid=5 "
      "prev_prio=120 ==> next_comm=b next_pid=6 next_prio=120");
  EXPECT_EQ(missing.kind, Kind::kMalformed);
  EXPECT_EQ(missing.error, "sched_switch without a prev_state= before ==>");
}

TEST(TraceLine, ReadsExit) {
  const TraceLine line = ParseTraceLine(
      "  sleep-32230   (  32230) [001] .....  2188.011309: "
      "sched_process_exit: comm=sleep pid=32230 prio=120 group_dead=true");
  ASSERT_EQ(line.kind, Kind::kExit) << line.error;
  EXPECT_EQ(line.pid, 32230);
  EXPECT_EQ(line.comm, "sleep");
}

// The perf script lines below have the shape `perf script` printed on this
// machine (linux-perf, Debian 12) for `perf record -e sched:...  -a`.
TEST(TraceLine, ReadsPerfScriptSwitchWithSpacesInComm) {
  // 17068.710004 s = 17068'710004000 ns; the task is "Web Content", tid 77.
  const TraceLine line = ParseTraceLine(
      "     Web Content    77 [003] 17068.710004:       sched:sched_switch: "
      "prev_comm=Web Content prev_pid=77 prev_prio=120 prev_state=D ==> "
      "next_comm=migration/3 next_pid=18 next_prio=0");
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.timestamp_ns, 17068'710004000);
  EXPECT_EQ(line.cpu, 3);
  EXPECT_EQ(line.task_pid, 77);
  EXPECT_EQ(line.task_tgid, 0);
  EXPECT_EQ(line.prev_comm, "Web Content");
  EXPECT_EQ(line.prev_pid, 77);
  EXPECT_EQ(line.next_comm, "migration/3");
  EXPECT_EQ(line.next_pid, 18);
}

TEST(TraceLine, ReadsPerfScriptCommEndingInDashNumber) {
  // The ftrace reading of "a-12 99" would take pid "12 99"; perf's is tid 99.
  const TraceLine line = ParseTraceLine(
      "  a-12    99 [000] 1.000001: sched:sched_process_exit: comm=a-12 "
      "pid=99 prio=120 group_dead=true");
  ASSERT_EQ(line.kind, Kind::kExit) << line.error;
  EXPECT_EQ(line.task_pid, 99);
  EXPECT_EQ(line.comm, "a-12");
  EXPECT_EQ(line.pid, 99);
  EXPECT_EQ(line.timestamp_ns, 1'000001000);
}

TEST(TraceLine, ReadsPerfScriptMigrateAndSkipsWakeup) {
  const TraceLine migrate = ParseTraceLine(
      "     migration/0    18 [000] 17068.710008: sched:sched_migrate_task: "
      "comm=perf pid=3335 prio=120 orig_cpu=0 dest_cpu=1");
  ASSERT_EQ(migrate.kind, Kind::kMigrate) << migrate.error;
  EXPECT_EQ(migrate.task_pid, 18);
  EXPECT_EQ(migrate.comm, "perf");
  EXPECT_EQ(migrate.pid, 3335);
  EXPECT_EQ(migrate.orig_cpu, 0);
  EXPECT_EQ(migrate.dest_cpu, 1);
  const TraceLine wakeup = ParseTraceLine(
      "            perf  3335 [000] 17068.709999:       sched:sched_wakeup: "
      "comm=migration/0 pid=18 prio=0 target_cpu=000");
  EXPECT_EQ(wakeup.kind, Kind::kOtherSched);
  EXPECT_EQ(wakeup.task_pid, 3335);
}

TEST(TraceLine, ReadsAPerfScriptSwitchOfATaskPerfDoesNotKnow) {
  // Seen in CI: perf record -a on a host where a chroot's cmake ran; perf
  // had no record of the task and printed ":-1 -1". The switch's own fields
  // say who ran: prev 11149, next the idle task 0.
  const TraceLine line = ParseTraceLine(
      "             :-1    -1 [001] 19263.554380: sched:sched_switch: "
      "prev_comm=cmake prev_pid=11149 prev_prio=120 prev_state=X ==> "
      "next_comm=swapper/1 next_pid=0 next_prio=120");
  ASSERT_EQ(line.kind, Kind::kSwitch) << line.error;
  EXPECT_EQ(line.task_pid, 0);
  EXPECT_EQ(line.cpu, 1);
  EXPECT_EQ(line.timestamp_ns, 19263554380000);
  EXPECT_EQ(line.prev_pid, 11149);
  EXPECT_EQ(line.next_pid, 0);
  // Any other negative tid is still malformed.
  EXPECT_EQ(ParseTraceLine("  x -2 [001] 1.000001: sched:sched_switch: "
                           "prev_comm=a prev_pid=1 prev_prio=120 "
                           "prev_state=S ==> next_comm=b next_pid=2 "
                           "next_prio=120")
                .kind,
            Kind::kMalformed);
}

TEST(TraceLine, NamesWhatIsWrongWithAPerfScriptLine) {
  // No "==> next_comm=": the shared field parser rejects it as for ftrace.
  const TraceLine no_next = ParseTraceLine(
      "  perf 12 [000] 5.182336: sched:sched_switch: prev_comm=perf "
      "prev_pid=12 prev_prio=120 prev_state=S");
  EXPECT_EQ(no_next.kind, Kind::kMalformed);
  EXPECT_EQ(no_next.error, "sched_switch without prev_pid= or ==> next_comm=");
  // "x12" is no tid: the header fits neither layout.
  const TraceLine bad_tid = ParseTraceLine(
      "  perf x12 [000] 5.182336: sched:sched_switch: prev_comm=perf "
      "prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=a next_pid=1");
  EXPECT_EQ(bad_tid.kind, Kind::kMalformed);
  EXPECT_NE(bad_tid.error.find("COMM TID [CPU] SECONDS.FRACTION: sched:EVENT:"),
            std::string_view::npos)
      << bad_tid.error;
}

TEST(TraceLine, SkipsCommentsOtherEventsAndNonSchedulerLines) {
  EXPECT_EQ(ParseTraceLine("# tracer: nop").kind, Kind::kNotScheduler);
  EXPECT_EQ(ParseTraceLine("").kind, Kind::kNotScheduler);
  EXPECT_EQ(ParseTraceLine("  bash-1 [000] .... 1.000001: irq_handler_entry: "
                           "irq=1 name=sched_x")
                .kind,
            Kind::kNotScheduler);
  const TraceLine wakeup = ParseTraceLine(
      "  io_thd_1-9912 (   9860) [000] dNs3.  1218.816055: sched_wakeup: "
      "comm=rcu_preempt pid=15 prio=120 target_cpu=000");
  EXPECT_EQ(wakeup.kind, Kind::kOtherSched);
  EXPECT_EQ(wakeup.task_pid, 9912);
  EXPECT_EQ(wakeup.task_tgid, 9860);
}

TEST(TraceLine, FlagsBrokenSchedulerLines) {
  EXPECT_EQ(ParseTraceLine("garbage sched_switch: prev_comm=a").kind,
            Kind::kMalformed);
  EXPECT_EQ(ParseTraceLine("  a-1 [000] d..2. 1.5: sched_switch: prev_comm=a "
                           "prev_pid=1 prev_prio=120 prev_state=S")
                .kind,
            Kind::kMalformed);
  EXPECT_EQ(ParseTraceLine("  a-1 [000] d..2. 1.5: sched_switch: prev_comm=a "
                           "prev_pid=x ==> next_comm=b next_pid=2")
                .kind,
            Kind::kMalformed);
  EXPECT_EQ(ParseTraceLine("  a-1 [000] d..2. 1.5: sched_process_exit: pid=1")
                .kind,
            Kind::kMalformed);
}

}  // namespace
}  // namespace schedcache
