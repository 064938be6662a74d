// The live collector against the real kernel: a private instance records a
// workload this test owns, the reader decodes its raw ring buffers, and the
// instance is gone afterwards. Needs root and tracefs with the sched
// tracepoints; skips, saying which is missing, elsewhere.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "collector/sched_event.h"
#include "collector/tracefs_reader.h"
#include "collector/tracefs_session.h"
#include "common/fake_clock.h"

namespace schedcache::host {
namespace {

std::uint64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}

class CollectingSink : public SchedEventSink {
 public:
  void OnEvent(const RawSchedEvent& event) override { events.push_back(event); }
  std::vector<RawSchedEvent> events;
};

class TracefsLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "not root (euid " << geteuid()
                   << "): tracefs instances need root";
    }
    const absl::StatusOr<std::string> dir = EnsureTracefsMounted();
    if (!dir.ok()) GTEST_SKIP() << "no tracefs: " << dir.status();
    for (const char* event : {"sched_switch", "sched_migrate_task",
                              "sched_process_fork", "sched_process_exit"}) {
      const std::string path = absl::StrCat(*dir, "/events/sched/", event);
      if (!std::filesystem::exists(path)) {
        GTEST_SKIP() << "no sched event: " << path << " does not exist";
      }
    }
    tracing_dir_ = *dir;
  }
  std::string tracing_dir_;
};

// WriteInt sends one int through a pipe to the test process.
void WriteInt(int fd, int value) {
  if (write(fd, &value, sizeof(value)) != sizeof(value)) _exit(3);
}

// StartBusyProcess forks a process whose two threads ("sc-busy") alternate
// 2 ms of spinning with 1 ms of sleep for `run_for`, so each switches out
// and back in hundreds of times; each reports its tid through `report_fd`.
pid_t StartBusyProcess(int report_fd, absl::Duration run_for) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const absl::Time end = absl::Now() + run_for;
  auto work = [report_fd, end] {
    prctl(PR_SET_NAME, "sc-busy");
    WriteInt(report_fd, static_cast<int>(gettid()));
    while (absl::Now() < end) {
      const absl::Time spin_end = absl::Now() + absl::Milliseconds(2);
      while (absl::Now() < spin_end) {
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
  };
  std::thread first(work);
  std::thread second(work);
  first.join();
  second.join();
  _exit(0);
}

// StartForkingProcess forks a process that forks a child which exits at
// once; it reports the child's pid through `report_fd` and reaps it.
pid_t StartForkingProcess(int report_fd) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  WriteInt(report_fd, child);
  waitpid(child, nullptr, 0);
  _exit(0);
}

int ReadInt(int fd) {
  int value = -1;
  return read(fd, &value, sizeof(value)) == sizeof(value) ? value : -1;
}

bool HasEvent(const std::vector<RawSchedEvent>& events,
              const std::function<bool(const RawSchedEvent&)>& match) {
  for (const RawSchedEvent& event : events) {
    if (match(event)) return true;
  }
  return false;
}

// Workload is what the test's processes reported about themselves.
struct Workload {
  pid_t busy = -1;
  int busy_tids[2] = {-1, -1};
  pid_t forker = -1;
  int forked_child = -1;
};

// StartWorkload forks the busy process and the forking one and waits for
// their reports (each child writes them at once).
void StartWorkload(Workload& workload) {
  int busy_pipe[2], fork_pipe[2];
  ASSERT_EQ(pipe(busy_pipe), 0);
  ASSERT_EQ(pipe(fork_pipe), 0);
  workload.busy = StartBusyProcess(busy_pipe[1], absl::Milliseconds(600));
  workload.forker = StartForkingProcess(fork_pipe[1]);
  workload.busy_tids[0] = ReadInt(busy_pipe[0]);
  workload.busy_tids[1] = ReadInt(busy_pipe[0]);
  workload.forked_child = ReadInt(fork_pipe[0]);
  for (const int fd :
       {busy_pipe[0], busy_pipe[1], fork_pipe[0], fork_pipe[1]}) {
    close(fd);
  }
  ASSERT_GT(workload.busy_tids[0], 0);
  ASSERT_GT(workload.busy_tids[1], 0);
  ASSERT_GT(workload.forked_child, 0);
}

// Capture is what one recording produced, read before the instance went.
struct Capture {
  std::vector<RawSchedEvent> events;
  ReaderCounters counters;
  RingBufferStats lost;
  std::uint64_t window_start_ns = 0;
  std::uint64_t window_end_ns = 0;
  std::string directory;
};

// RecordWorkload records the workload for 1 s, reaps it, drains the
// buffers and stops the session, in the order TracefsReader documents.
void RecordWorkload(Workload& workload, Capture& capture) {
  capture.window_start_ns = MonotonicNs();
  absl::StatusOr<std::unique_ptr<TracefsSession>> session =
      TracefsSession::Start({});
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::unique_ptr<TracefsReader>> reader =
      TracefsReader::Open(**session, {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_NO_FATAL_FAILURE(StartWorkload(workload));
  CollectingSink sink;
  ASSERT_TRUE((*reader)->Run(absl::Now() + absl::Seconds(1), sink).ok());
  int busy_status = -1, forker_status = -1;
  ASSERT_EQ(waitpid(workload.busy, &busy_status, 0), workload.busy);
  ASSERT_EQ(waitpid(workload.forker, &forker_status, 0), workload.forker);
  EXPECT_EQ(busy_status, 0);
  EXPECT_EQ(forker_status, 0);
  ASSERT_TRUE((*session)->TurnOff().ok());
  ASSERT_TRUE((*reader)->Drain(sink).ok());
  capture.window_end_ns = MonotonicNs();
  absl::StatusOr<RingBufferStats> lost = (*session)->ReadLostEvents();
  ASSERT_TRUE(lost.ok()) << lost.status();
  capture.lost = *lost;
  capture.counters = (*reader)->counters();
  capture.events = std::move(sink.events);
  reader->reset();
  capture.directory = (*session)->directory();
  ASSERT_TRUE(std::filesystem::exists(capture.directory));
  ASSERT_TRUE((*session)->Stop().ok());
}

TEST_F(TracefsLiveTest, RecordsAWorkloadAndRemovesTheInstance) {
  Workload workload;
  Capture capture;
  ASSERT_NO_FATAL_FAILURE(RecordWorkload(workload, capture));
  EXPECT_FALSE(std::filesystem::exists(capture.directory));
  EXPECT_EQ(capture.lost.lost(), 0u)
      << "overrun " << capture.lost.overrun << ", dropped "
      << capture.lost.dropped_events;
  EXPECT_EQ(capture.counters.parse.unparsed, 0u);
  EXPECT_EQ(capture.counters.parse.unknown_type, 0u);
  EXPECT_EQ(capture.counters.parse.bad_subbuffers, 0u);
  EXPECT_EQ(capture.counters.parse.events, capture.events.size());
  std::cout << "decoded " << capture.events.size() << " events from "
            << capture.counters.subbuffers << " sub-buffers\n";

  // Timestamps are CLOCK_MONOTONIC, inside the test's window, and never go
  // back on one CPU.
  std::map<int, std::uint64_t> last_ns_by_cpu;
  for (const RawSchedEvent& event : capture.events) {
    ASSERT_GE(event.timestamp_ns, capture.window_start_ns);
    ASSERT_LE(event.timestamp_ns, capture.window_end_ns);
    std::uint64_t& last_ns = last_ns_by_cpu[event.cpu];
    ASSERT_GE(event.timestamp_ns, last_ns) << "CPU " << event.cpu;
    last_ns = event.timestamp_ns;
  }
}

TEST_F(TracefsLiveTest, SeesTheWorkloadsSwitchesForkAndExits) {
  Workload workload;
  Capture capture;
  ASSERT_NO_FATAL_FAILURE(RecordWorkload(workload, capture));
  const std::vector<RawSchedEvent>& events = capture.events;
  for (const int tid : workload.busy_tids) {
    EXPECT_TRUE(HasEvent(events,
                         [tid](const RawSchedEvent& e) {
                           return e.kind == SchedEventKind::kSwitch &&
                                  e.next_pid == tid &&
                                  e.next_comm_view() == "sc-busy";
                         }))
        << "no switch to busy thread " << tid;
    EXPECT_TRUE(HasEvent(events,
                         [tid](const RawSchedEvent& e) {
                           return e.kind == SchedEventKind::kSwitch &&
                                  e.prev_pid == tid;
                         }))
        << "no switch away from busy thread " << tid;
  }
  const pid_t forker = workload.forker;
  const int child = workload.forked_child;
  EXPECT_TRUE(HasEvent(events,
                       [&](const RawSchedEvent& e) {
                         return e.kind == SchedEventKind::kFork &&
                                e.parent_pid == forker && e.child_pid == child;
                       }))
      << "no fork of " << child << " by " << forker;
  EXPECT_TRUE(HasEvent(events,
                       [&](const RawSchedEvent& e) {
                         return e.kind == SchedEventKind::kExit &&
                                e.pid == child && e.group_dead;
                       }))
      << "no exit of " << child;
  EXPECT_TRUE(HasEvent(events,
                       [&](const RawSchedEvent& e) {
                         return e.kind == SchedEventKind::kExit &&
                                e.pid == forker;
                       }))
      << "no exit of " << forker;
}

TEST_F(TracefsLiveTest, DestructorRemovesTheInstanceWithoutStop) {
  std::string directory;
  {
    absl::StatusOr<std::unique_ptr<TracefsSession>> session =
        TracefsSession::Start({});
    ASSERT_TRUE(session.ok()) << session.status();
    directory = (*session)->directory();
    ASSERT_TRUE(std::filesystem::exists(directory));
    EXPECT_EQ(std::filesystem::path(directory).filename(),
              absl::StrCat(kInstancePrefix, getpid()));
  }
  EXPECT_FALSE(std::filesystem::exists(directory));
}

TEST_F(TracefsLiveTest, StopTwiceIsSafe) {
  absl::StatusOr<std::unique_ptr<TracefsSession>> session =
      TracefsSession::Start({});
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->Stop().ok());
  EXPECT_TRUE((*session)->Stop().ok());
  EXPECT_EQ((*session)->instance(), nullptr);
  EXPECT_FALSE(std::filesystem::exists((*session)->directory()));
}

TEST_F(TracefsLiveTest, StopWithAReaderOpenFailsAndARetryAfterItSucceeds) {
  absl::StatusOr<std::unique_ptr<TracefsSession>> session =
      TracefsSession::Start({});
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::unique_ptr<TracefsReader>> reader =
      TracefsReader::Open(**session, {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  const absl::Status refused = (*session)->Stop();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.message()),
              ::testing::HasSubstr((*session)->directory()));
  EXPECT_TRUE(std::filesystem::exists((*session)->directory()));
  reader->reset();
  EXPECT_TRUE((*session)->Stop().ok());
  EXPECT_FALSE(std::filesystem::exists((*session)->directory()));
}

TEST_F(TracefsLiveTest, StopRequestEndsRunBeforeTheDeadline) {
  absl::StatusOr<std::unique_ptr<TracefsSession>> session =
      TracefsSession::Start({});
  ASSERT_TRUE(session.ok()) << session.status();
  // The reader's clock stands still, so its deadline never comes: Run can
  // only return through the stop.
  const auto clock = std::make_shared<const FakeClock>(absl::UnixEpoch());
  absl::StatusOr<std::unique_ptr<TracefsReader>> reader =
      TracefsReader::Open(**session, {.clock = clock});
  ASSERT_TRUE(reader.ok()) << reader.status();
  (*reader)->RequestStop();
  CollectingSink sink;
  EXPECT_TRUE((*reader)->Run(clock->Now() + absl::Seconds(1), sink).ok());
}

TEST_F(TracefsLiveTest, RejectsABadBufferSizeNamingTheValue) {
  const absl::StatusOr<std::unique_ptr<TracefsSession>> session =
      TracefsSession::Start({.buffer_size_kb = -5});
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(session.status().message()),
              ::testing::HasSubstr("-5"));
  EXPECT_FALSE(std::filesystem::exists(
      absl::StrCat(tracing_dir_, "/instances/", kInstancePrefix, getpid())));
}

TEST_F(TracefsLiveTest, RemovesStaleInstancesOfDeadPidsOnly) {
  // A pid that is certainly dead: a child we have reaped.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string stale =
      absl::StrCat(tracing_dir_, "/instances/", kInstancePrefix, dead);
  // mkdir in instances/ is how the kernel creates an instance.
  ASSERT_TRUE(std::filesystem::create_directory(stale));
  absl::StatusOr<std::unique_ptr<TracefsSession>> live =
      TracefsSession::Start({});
  ASSERT_TRUE(live.ok()) << live.status();

  const absl::StatusOr<int> removed = RemoveStaleInstances();
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_GE(*removed, 1);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists((*live)->directory()));
}

}  // namespace
}  // namespace schedcache::host
