// ThreadTable's tgid facts: the kernel's rule for a new task's process
// (copy_process: CLONE_THREAD joins the creator's thread group, anything
// else starts its own) and the comm an exec gives.
#include "events/thread_table.h"

#include "gtest/gtest.h"

namespace schedcache {
namespace {

// Clone flags as glibc passes them. pthread_create: CLONE_VM | CLONE_FS |
// CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
// CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID
// = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x80000 |
//   0x100000 | 0x200000 = 0x3d0f00. fork(): CLONE_CHILD_SETTID |
// CLONE_CHILD_CLEARTID | SIGCHLD = 0x1000000 | 0x200000 | 0x11 = 0x1200011.
constexpr uint64_t kPthreadCreate = 0x3d0f00;
constexpr uint64_t kFork = 0x1200011;

TEST(NewTaskTgid, AThreadJoinsItsCreatorsProcessAForkIsItsOwn) {
  EXPECT_EQ(NewTaskTgid(/*pid=*/12, kPthreadCreate, /*creator_tgid=*/10), 10);
  EXPECT_EQ(NewTaskTgid(12, kFork, 10), 12);
  // CLONE_THREAD alone decides: a thread of an unknown process is unknown.
  EXPECT_EQ(NewTaskTgid(12, kCloneThread, 0), 0);
  EXPECT_EQ(NewTaskTgid(12, 0, 0), 12);
}

TEST(ThreadTable, AThreadOfAThreadJoinsTheProcess) {
  ThreadTable table;
  table.Learn(100, 100, "main");
  // 100 creates thread 101, and 101 creates 102: both join process 100.
  const int32_t creator_of_101 = table.Find(100)->tgid;
  table.LearnNewTask(101, kPthreadCreate, creator_of_101, "main");
  const int32_t creator_of_102 = table.Find(101)->tgid;
  table.LearnNewTask(102, kPthreadCreate, creator_of_102, "main");
  ASSERT_NE(table.Find(102), nullptr);
  EXPECT_EQ(table.Find(102)->tgid, 100);
  EXPECT_TRUE(table.Find(102)->tgid_known);
  EXPECT_EQ(table.Find(102)->comm.view(), "main");
  EXPECT_EQ(table.LiveThreads(100), 3);
}

TEST(ThreadTable, AForkOfAThreadIsAProcessOfItsOwn) {
  ThreadTable table;
  table.Learn(100, 100, "main");
  table.LearnNewTask(101, kPthreadCreate, 100, "main");
  // Thread 101 (not the leader) forks 200.
  table.LearnNewTask(200, kFork, table.Find(101)->tgid, "main");
  EXPECT_EQ(table.Find(200)->tgid, 200);
  EXPECT_TRUE(table.Find(200)->tgid_known);
  EXPECT_EQ(table.LiveThreads(100), 2);
  EXPECT_EQ(table.LiveThreads(200), 1);
}

TEST(ThreadTable, APidReusedAfterItsThreadEndedIsTheNewTasks) {
  ThreadTable table;
  table.Learn(100, 100, "main");
  table.LearnNewTask(101, kPthreadCreate, 100, "worker");
  table.MarkExited(101);
  table.Forget(101);  // its last switch-out
  // The kernel hands 101 to a process that process 300 forks.
  table.Learn(300, 300, "other");
  table.LearnNewTask(101, kFork, 300, "other");
  EXPECT_EQ(table.Find(101)->tgid, 101);
  EXPECT_FALSE(table.Find(101)->exited);
  EXPECT_EQ(table.Find(101)->comm.view(), "other");
  EXPECT_EQ(table.LiveThreads(100), 1);
  EXPECT_EQ(table.LiveThreads(101), 1);
}

TEST(ThreadTable, ANewTaskMovesAThreadFiledUnderItsOwnPid) {
  ThreadTable table;
  // 101 was seen before its creation was (the pid fallback).
  table.Learn(101, 0, "w");
  EXPECT_FALSE(table.Find(101)->tgid_known);
  table.LearnNewTask(101, kPthreadCreate, 100, "w");
  EXPECT_EQ(table.Find(101)->tgid, 100);
  EXPECT_EQ(table.LiveThreads(101), 0);
  EXPECT_EQ(table.LiveThreads(100), 1);
}

TEST(ExecComm, IsTheLastPathComponent) {
  EXPECT_EQ(ExecComm("/bin/spin"), "spin");
  EXPECT_EQ(ExecComm("spin"), "spin");
  EXPECT_EQ(ExecComm("/usr/lib/a very long program name"),
            "a very long program name");  // Comm cuts it to 15
  EXPECT_EQ(Comm(ExecComm("/usr/lib/a very long program name")).view(),
            "a very long pro");
}

}  // namespace
}  // namespace schedcache
