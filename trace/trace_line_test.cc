#include "trace/trace_line.h"

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

TEST(TraceLine, ReadsExit) {
  const TraceLine line = ParseTraceLine(
      "  sleep-32230   (  32230) [001] .....  2188.011309: "
      "sched_process_exit: comm=sleep pid=32230 prio=120 group_dead=true");
  ASSERT_EQ(line.kind, Kind::kExit) << line.error;
  EXPECT_EQ(line.pid, 32230);
  EXPECT_EQ(line.comm, "sleep");
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
