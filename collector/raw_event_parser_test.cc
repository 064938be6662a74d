// RawEventParser over sub-buffers built by hand in the kernel's ring-buffer
// layout, with event formats written as Linux 6.18 prints them, so the
// decoding is checked without root. (tracefs_live_test checks it on the
// real kernel.)
#include "collector/raw_event_parser.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "collector/sched_event.h"

namespace schedcache::host {
namespace {

using ::testing::HasSubstr;

constexpr int kSwitchId = 372;
constexpr int kMigrateId = 371;
constexpr int kForkId = 366;
constexpr int kExitId = 369;
constexpr int kExecId = 365;
constexpr int kNewTaskId = 205;

constexpr char kHeaderPage[] =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

constexpr char kCommonFields[] =
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char "
    "common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

std::string Format(const char* name, int id, const std::string& fields,
                   const std::string& print) {
  return absl::StrCat("name: ", name, "\nID: ", id, "\n", kCommonFields, fields,
                      "\nprint fmt: ", print, "\n");
}

// Offsets as in this kernel's format files (see the field lines below).
constexpr int kPrevPidOffset = 24, kPrevStateOffset = 32, kNextCommOffset = 40,
              kNextPidOffset = 56, kSwitchSize = 64;

// FakeTracingDir writes events/header_page and events/sched/*/format into
// a temporary directory; `skip` leaves one event out. libtracefs takes a
// directory with an `enable` file for an event system, as tracefs has.
class FakeTracingDir {
 public:
  explicit FakeTracingDir(const std::string& skip = "")
      : root_(std::filesystem::path(::testing::TempDir()) /
              absl::StrCat("fake_tracing_", getpid(), "_",
                           ::testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name())) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "events");
    std::ofstream(root_ / "events/header_page") << kHeaderPage;
    std::filesystem::create_directories(root_ / "events/sched");
    std::ofstream(root_ / "events/sched/enable") << "0\n";
    Write(
        skip, "sched_switch",
        Format("sched_switch", kSwitchId,
               "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
               "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
               "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
               "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
               "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
               "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
               "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
               "\"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid"));
    Write(skip, "sched_migrate_task",
          Format(
              "sched_migrate_task", kMigrateId,
              "\tfield:__data_loc char[] comm;\toffset:8;\tsize:4;\tsigned:0;\n"
              "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
              "\tfield:int prio;\toffset:16;\tsize:4;\tsigned:1;\n"
              "\tfield:int orig_cpu;\toffset:20;\tsize:4;\tsigned:1;\n"
              "\tfield:int dest_cpu;\toffset:24;\tsize:4;\tsigned:1;\n",
              "\"pid=%d\", REC->pid"));
    Write(skip, "sched_process_fork",
          Format("sched_process_fork", kForkId,
                 "\tfield:__data_loc char[] "
                 "parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n"
                 "\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
                 "\tfield:__data_loc char[] "
                 "child_comm;\toffset:16;\tsize:4;\tsigned:0;\n"
                 "\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n",
                 "\"pid=%d child_pid=%d\", REC->parent_pid, REC->child_pid"));
    Write(skip, "sched_process_exit",
          Format("sched_process_exit", kExitId,
                 "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                 "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
                 "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
                 "\tfield:bool group_dead;\toffset:32;\tsize:1;\tsigned:0;\n",
                 "\"pid=%d\", REC->pid"));
    Write(skip, "sched_process_exec",
          Format("sched_process_exec", kExecId,
                 "\tfield:__data_loc char[] "
                 "filename;\toffset:8;\tsize:4;\tsigned:0;\n"
                 "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
                 "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n",
                 "\"pid=%d\", REC->pid"));
    if (skip == "task_newtask") return;
    std::filesystem::create_directories(root_ / "events/task");
    std::ofstream(root_ / "events/task/enable") << "0\n";
    Write(skip, "task_newtask",
          Format("task_newtask", kNewTaskId,
                 "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
                 "\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
                 "\tfield:u64 clone_flags;\toffset:32;\tsize:8;\tsigned:0;\n"
                 "\tfield:short oom_score_adj;\toffset:40;\tsize:2;"
                 "\tsigned:1;\n",
                 "\"pid=%d\", REC->pid"),
          "task");
  }
  ~FakeTracingDir() { std::filesystem::remove_all(root_); }
  std::string path() const { return root_.string(); }

 private:
  void Write(const std::string& skip, const char* event,
             const std::string& text, const char* system = "sched") {
    if (skip == event) return;
    const std::filesystem::path dir = root_ / "events" / system / event;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "format") << text;
    std::ofstream(dir / "enable") << "0\n";
  }
  std::filesystem::path root_;
};

// Payload is one record's bytes, fields put at their format offsets.
class Payload {
 public:
  Payload(int type, int size) : bytes_(static_cast<std::size_t>(size)) {
    Put(0, static_cast<std::uint16_t>(type));
  }
  template <typename T>
  Payload& Put(int offset, T value) {
    std::memcpy(bytes_.data() + offset, &value, sizeof(value));
    return *this;
  }
  Payload& PutComm(int offset, const char* comm) {
    std::strncpy(reinterpret_cast<char*>(bytes_.data() + offset), comm,
                 kTaskCommLength - 1);
    return *this;
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

// SubbufferBuilder lays records out as the kernel's ring buffer does: a
// header (u64 timestamp, u64 commit = bytes of data), then per record a
// u32 whose low 5 bits are the length in 4-byte words (1..28) and high 27
// bits the time delta, then the payload padded to 4 bytes.
class SubbufferBuilder {
 public:
  explicit SubbufferBuilder(std::uint64_t timestamp) : bytes_(16) {
    std::memcpy(bytes_.data(), &timestamp, sizeof(timestamp));
  }
  SubbufferBuilder& Add(std::uint32_t delta, const Payload& payload) {
    const std::size_t words = (payload.bytes().size() + 3) / 4;
    const std::uint32_t header =
        static_cast<std::uint32_t>(words) | (delta << 5);
    const std::size_t at = bytes_.size();
    bytes_.resize(at + 4 + words * 4);
    std::memcpy(bytes_.data() + at, &header, sizeof(header));
    std::memcpy(bytes_.data() + at + 4, payload.bytes().data(),
                payload.bytes().size());
    return *this;
  }
  // Finish pads to one 4096-byte sub-buffer; `extra_commit` lies about the
  // data length.
  std::vector<std::uint8_t> Finish(std::uint64_t extra_commit = 0) const {
    std::vector<std::uint8_t> page = bytes_;
    const std::uint64_t commit = page.size() - 16 + extra_commit;
    std::memcpy(page.data() + 8, &commit, sizeof(commit));
    page.resize(4096);
    return page;
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

Payload Switch(int prev_pid, std::int64_t prev_state, const char* next_comm,
               int next_pid) {
  Payload payload(kSwitchId, kSwitchSize);
  payload.Put(kPrevPidOffset, std::int32_t{prev_pid})
      .Put(kPrevStateOffset, prev_state)
      .PutComm(kNextCommOffset, next_comm)
      .Put(kNextPidOffset, std::int32_t{next_pid});
  return payload;
}

class CollectingSink : public SchedEventSink {
 public:
  void OnEvent(const RawSchedEvent& event) override { events.push_back(event); }
  std::vector<RawSchedEvent> events;
};

std::unique_ptr<RawEventParser> LoadOrDie(const FakeTracingDir& dir) {
  absl::StatusOr<std::unique_ptr<RawEventParser>> parser =
      RawEventParser::Load(dir.path());
  EXPECT_TRUE(parser.ok()) << parser.status();
  return parser.ok() ? *std::move(parser) : nullptr;
}

TEST(RawEventParser, DecodesEachKindWithItsFieldsAndTimestamps) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  // Page time 1,000,000 ns; deltas 10, 20, 30, 40 give 1,000,010,
  // 1,000,030, 1,000,060 and 1,000,100.
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(1'000'000)
          .Add(10, Switch(/*prev_pid=*/101, /*prev_state=*/1, "next-comm", 202))
          .Add(20, Payload(kMigrateId, 32)
                       .Put(12, std::int32_t{303})
                       .Put(20, std::int32_t{1})
                       .Put(24, std::int32_t{0}))
          .Add(30, Payload(kForkId, 32)
                       .Put(12, std::int32_t{404})
                       .Put(20, std::int32_t{405}))
          .Add(40,
               Payload(kExitId, 36).Put(24, std::int32_t{405}).Put(32, true))
          .Finish();
  CollectingSink sink;
  const ParseCounts counts = parser->ParseSubbuffer(page, /*cpu=*/3, sink);
  EXPECT_EQ(counts.events, 4u);
  EXPECT_EQ(counts.unparsed + counts.unknown_type + counts.bad_subbuffers, 0u);
  ASSERT_EQ(sink.events.size(), 4u);

  const RawSchedEvent& sw = sink.events[0];
  EXPECT_EQ(sw.kind, SchedEventKind::kSwitch);
  EXPECT_EQ(sw.timestamp_ns, 1'000'010u);
  EXPECT_EQ(sw.cpu, 3);
  EXPECT_EQ(sw.prev_pid, 101);
  EXPECT_EQ(sw.prev_state, 1);
  EXPECT_EQ(sw.next_pid, 202);
  EXPECT_EQ(sw.next_comm_view(), "next-comm");

  const RawSchedEvent& migrate = sink.events[1];
  EXPECT_EQ(migrate.kind, SchedEventKind::kMigrate);
  EXPECT_EQ(migrate.timestamp_ns, 1'000'030u);
  EXPECT_EQ(migrate.pid, 303);
  EXPECT_EQ(migrate.orig_cpu, 1);
  EXPECT_EQ(migrate.dest_cpu, 0);

  const RawSchedEvent& fork = sink.events[2];
  EXPECT_EQ(fork.kind, SchedEventKind::kFork);
  EXPECT_EQ(fork.timestamp_ns, 1'000'060u);
  EXPECT_EQ(fork.parent_pid, 404);
  EXPECT_EQ(fork.child_pid, 405);

  const RawSchedEvent& exit = sink.events[3];
  EXPECT_EQ(exit.kind, SchedEventKind::kExit);
  EXPECT_EQ(exit.timestamp_ns, 1'000'100u);
  EXPECT_EQ(exit.pid, 405);
  EXPECT_TRUE(exit.group_dead);
}

TEST(RawEventParser, DecodesANewTaskWithItsCreatorAndAnExecWithItsPath) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  EXPECT_TRUE(parser->has_new_task());
  // task_newtask run by thread 500 (common_pid, offset 4) creating 501 with
  // pthread_create's flags; exec of "/bin/spin" (9 bytes with its NUL) put
  // after the fixed fields at offset 20: __data_loc = 9 << 16 | 20.
  Payload exec(kExecId, 29);
  exec.Put(8, std::uint32_t{9u << 16 | 20u})
      .Put(12, std::int32_t{600})
      .Put(16, std::int32_t{601});
  std::memcpy(const_cast<std::uint8_t*>(exec.bytes().data()) + 20,
              "/bin/spin", 9);
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(1'000)
          .Add(1, Payload(kNewTaskId, 42)
                      .Put(4, std::int32_t{500})
                      .Put(8, std::int32_t{501})
                      .PutComm(12, "spin")
                      .Put(32, std::uint64_t{0x3d0f00})
                      .Put(40, std::int16_t{-1000}))
          .Add(1, exec)
          .Finish();
  CollectingSink sink;
  const ParseCounts counts = parser->ParseSubbuffer(page, /*cpu=*/2, sink);
  EXPECT_EQ(counts.events, 2u);
  EXPECT_EQ(counts.unparsed + counts.unknown_type + counts.bad_subbuffers, 0u);
  ASSERT_EQ(sink.events.size(), 2u);
  const RawSchedEvent& created = sink.events[0];
  EXPECT_EQ(created.kind, SchedEventKind::kNewTask);
  EXPECT_EQ(created.parent_pid, 500);
  EXPECT_EQ(created.child_pid, 501);
  EXPECT_EQ(created.child_comm_view(), "spin");
  EXPECT_EQ(created.clone_flags, 0x3d0f00u);
  EXPECT_EQ(created.oom_score_adj, -1000);
  const RawSchedEvent& execd = sink.events[1];
  EXPECT_EQ(execd.kind, SchedEventKind::kExec);
  EXPECT_EQ(execd.pid, 600);
  EXPECT_EQ(execd.old_pid, 601);
  EXPECT_EQ(execd.filename, "/bin/spin");
}

TEST(RawEventParser, AnExecWhoseFilenameLiesPastTheRecordIsUnparsed) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  // 20 bytes of record, but the filename claims 9 bytes at offset 20.
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(1'000)
          .Add(1, Payload(kExecId, 20).Put(8, std::uint32_t{9u << 16 | 20u}))
          .Finish();
  CollectingSink sink;
  EXPECT_EQ(parser->ParseSubbuffer(page, 0, sink).unparsed, 1u);
  EXPECT_TRUE(sink.events.empty());
}

TEST(RawEventParser, AKernelWithoutTaskNewtaskStillLoads) {
  FakeTracingDir dir(/*skip=*/"task_newtask");
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  EXPECT_FALSE(parser->has_new_task());
  // Its records, were there any, are of an unknown type.
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(5).Add(1, Payload(kNewTaskId, 42)).Finish();
  CollectingSink sink;
  EXPECT_EQ(parser->ParseSubbuffer(page, 0, sink).unknown_type, 1u);
}

TEST(RawEventParser, CountsAShortRecordAndStillDecodesTheNext) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  // A sched_switch id on 8 bytes: its fields would lie past the record.
  const std::vector<std::uint8_t> page = SubbufferBuilder(5)
                                             .Add(1, Payload(kSwitchId, 8))
                                             .Add(1, Switch(1, 0, "a", 2))
                                             .Finish();
  CollectingSink sink;
  const ParseCounts counts = parser->ParseSubbuffer(page, 0, sink);
  EXPECT_EQ(counts.unparsed, 1u);
  EXPECT_EQ(counts.events, 1u);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].next_pid, 2);
}

TEST(RawEventParser, CountsARecordOfAnEventNotEnabled) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(5).Add(1, Payload(/*type=*/999, 16)).Finish();
  CollectingSink sink;
  const ParseCounts counts = parser->ParseSubbuffer(page, 0, sink);
  EXPECT_EQ(counts.unknown_type, 1u);
  EXPECT_EQ(counts.events, 0u);
  EXPECT_TRUE(sink.events.empty());
}

TEST(RawEventParser, RejectsASubbufferWhoseCommitRunsPastItsEnd) {
  FakeTracingDir dir;
  std::unique_ptr<RawEventParser> parser = LoadOrDie(dir);
  ASSERT_NE(parser, nullptr);
  const std::vector<std::uint8_t> page =
      SubbufferBuilder(5).Add(1, Switch(1, 0, "a", 2)).Finish();
  // The same bytes cut short: the header promises 68 bytes of data.
  const std::vector<std::uint8_t> cut(page.begin(), page.begin() + 40);
  CollectingSink sink;
  const ParseCounts counts = parser->ParseSubbuffer(cut, 0, sink);
  EXPECT_EQ(counts.bad_subbuffers, 1u);
  EXPECT_TRUE(sink.events.empty());
}

TEST(RawEventParser, LoadNamesTheMissingEvent) {
  FakeTracingDir dir(/*skip=*/"sched_process_exit");
  const absl::StatusOr<std::unique_ptr<RawEventParser>> parser =
      RawEventParser::Load(dir.path());
  EXPECT_EQ(parser.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(parser.status().message(), HasSubstr("sched/sched_process_exit"));
}

TEST(RawEventParser, LoadNamesTheDirectoryWithoutFormats) {
  const std::string missing =
      absl::StrCat(::testing::TempDir(), "/no_tracing_dir_", getpid());
  const absl::StatusOr<std::unique_ptr<RawEventParser>> parser =
      RawEventParser::Load(missing);
  EXPECT_FALSE(parser.ok());
  EXPECT_THAT(parser.status().message(), HasSubstr(missing));
}

}  // namespace
}  // namespace schedcache::host
