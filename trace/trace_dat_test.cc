// The .dat reader's checks that need no kernel: how a trace-cmd file is told
// apart (by its magic bytes, never its name) and the errors for files that
// are not one or are cut short. tests/trace_dat_replay_test.cc reads real
// captures.
#include "trace/trace_dat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/testing/tiny_trace_dat.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using test_support::CommonFields;
using test_support::EventFormat;
using test_support::ExitFormat;
using test_support::ExitRecord;
using test_support::FormatField;
using test_support::kSwitchId;
using test_support::Le;
using test_support::MigrateFormat;
using test_support::MigrateRecord;
using test_support::SwitchFields;
using test_support::SwitchFormat;
using test_support::SwitchRecord;
using test_support::TinyTraceDat;

class TraceDatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("trace_dat_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  // Truncated is what a trace-cmd file holds after its first 12 bytes: the
  // magic, then version "6" and its NUL; the header that follows is gone.
  std::string Truncated(const std::string& name) {
    return Write(name, std::string(kTraceDatMagic) + std::string("6\0", 2));
  }

  std::filesystem::path dir_;
};

TEST_F(TraceDatTest, MagicIsFoundByContentNotByName) {
  EXPECT_TRUE(HasTraceDatMagic(Truncated("capture.txt")));
  EXPECT_FALSE(HasTraceDatMagic(Write("trace.dat", "# tracer: nop\n")));
  // The first 9 of the 10 magic bytes are not a trace-cmd file.
  EXPECT_FALSE(HasTraceDatMagic(
      Write("short.dat", std::string(kTraceDatMagic.substr(0, 9)))));
  EXPECT_FALSE(HasTraceDatMagic(Write("empty.dat", "")));
}

TEST_F(TraceDatTest, MagicIsNotLookedForWhereReadingWouldConsumeOrFail) {
  EXPECT_FALSE(HasTraceDatMagic("-"));
  EXPECT_FALSE(HasTraceDatMagic(dir_.string()));
  EXPECT_FALSE(HasTraceDatMagic((dir_ / "missing.dat").string()));
  // A FIFO without a writer: opening it to look would block.
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(HasTraceDatMagic(fifo));
}

TEST_F(TraceDatTest, TextFileIsNotATraceCmdFile) {
  const std::string path = Write("trace.dat", "# tracer: nop\n");
  const absl::Status status =
      ReadTraceDat(path, [](const TraceLine&) { return absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("not a trace-cmd file"));
}

TEST_F(TraceDatTest, TruncatedFileIsDataLossNamingTheFile) {
  const std::string path = Truncated("cut.dat");
  int visited = 0;
  const absl::Status status = ReadTraceDat(path, [&](const TraceLine&) {
    ++visited;
    return absl::OkStatus();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("truncated or corrupt"));
  EXPECT_EQ(visited, 0);
}

TEST_F(TraceDatTest, ReplayTraceFileReadsATraceCmdMagicFileAsDat) {
  // Named .txt and cut short: ReplayTraceFile gives the .dat reader's error,
  // not the text reader's malformed lines.
  const std::string path = Truncated("capture.txt");
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats = ReplayTraceFile(path, {}, sink);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(stats.status().message(), HasSubstr("trace-cmd file"));
}

TEST_F(TraceDatTest, ReplayTraceFileReadsTextNamedDatAsText) {
  // One switch on CPU 0: bash (pid 7) runs from 5.000001 s on; 250 Hz.
  const std::string path = Write(
      "trace.dat",
      "  <idle>-0 [000] 5.000000: sched_switch: prev_comm=swapper/0 "
      "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=7 "
      "next_prio=120\n");
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats = ReplayTraceFile(path, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_FALSE(stats->trace_dat);
  EXPECT_EQ(stats->lines, 1);
  EXPECT_EQ(stats->switch_events, 1);
}


// SchedDat holds, at 5 s: bash (7) switched in; 1 us later its thread 8
// (worker) migrates 0 -> 1; a wakeup and an irq record; then 8 exits and
// bash switches out, 5 us after the start.
std::string SchedDat() {
  TinyTraceDat dat(5'000'000'000);
  dat.AddFormat("sched", SwitchFormat());
  dat.AddFormat("sched", MigrateFormat());
  dat.AddFormat("sched", ExitFormat());
  dat.AddFormat("sched", EventFormat("sched_wakeup", 303,
                                     {{"pid_t pid", 8, 4}}));
  dat.AddFormat("irq", EventFormat("irq_handler_entry", 400,
                                   {{"int irq", 8, 4}}));
  dat.AddRecord(0, SwitchRecord(0, "swapper/0", 7, "bash"));
  dat.AddRecord(1000, MigrateRecord(7, 8, "worker", 0, 1));
  dat.AddRecord(500, CommonFields(303, 7) + Le(9, 4));
  dat.AddRecord(500, CommonFields(400, 7) + Le(11, 4));
  dat.AddRecord(1000, ExitRecord(8, "worker"));
  dat.AddRecord(2000, SwitchRecord(7, "bash", 0, "swapper/0"));
  return dat.Bytes();
}

TEST_F(TraceDatTest, RecordsBecomeTheTraceLinesOfTheirFields) {
  std::vector<std::string> seen;
  const absl::Status status =
      ReadTraceDat(Write("sched.dat", SchedDat()), [&](const TraceLine& l) {
        seen.push_back(absl::StrCat(
            static_cast<int>(l.kind), " ", l.timestamp_ns, " cpu ", l.cpu,
            " task ", l.task_pid, " ", std::string(l.prev_comm), ":",
            l.prev_pid, ">", std::string(l.next_comm), ":", l.next_pid, " ",
            std::string(l.comm), ":", l.pid, " ", l.orig_cpu, ">",
            l.dest_cpu));
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  // Kinds: 0 not scheduler, 1 other sched, 2 switch, 3 migrate, 4 exit.
  // Times: 5 s plus the running sum of the deltas 0, 1000, 500, 500, 1000,
  // 2000 ns.
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "2 5000000000 cpu 0 task 0 swapper/0:0>bash:7 :0 0>0",
                      "3 5000001000 cpu 0 task 7 :0>:0 worker:8 0>1",
                      "1 5000001500 cpu 0 task 7 :0>:0 :0 0>0",
                      "0 5000002000 cpu 0 task 7 :0>:0 :0 0>0",
                      "4 5000003000 cpu 0 task 8 :0>:0 worker:8 0>0",
                      "2 5000005000 cpu 0 task 7 bash:7>swapper/0:0 :0 0>0",
                  }));
}

TEST_F(TraceDatTest, DatReplaysExactlyAsTheReportTextOfItsRecords) {
  // What `trace-cmd report -t` prints of SchedDat(), with the sched
  // events' fields in the kernel's key=value form.
  const std::string report =
      "cpus=1\n"
      "  <idle>-0 [000] 5.000000000: sched_switch: prev_comm=swapper/0 "
      "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=bash next_pid=7 "
      "next_prio=120\n"
      "  bash-7 [000] 5.000001000: sched_migrate_task: comm=worker pid=8 "
      "prio=120 orig_cpu=0 dest_cpu=1\n"
      "  bash-7 [000] 5.000001500: sched_wakeup: pid=9\n"
      "  bash-7 [000] 5.000002000: irq_handler_entry: irq=11\n"
      "  worker-8 [000] 5.000003000: sched_process_exit: comm=worker pid=8 "
      "prio=120\n"
      "  bash-7 [000] 5.000005000: sched_switch: prev_comm=bash prev_pid=7 "
      "prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 "
      "next_prio=120\n";
  RecordingSink from_dat;
  const absl::StatusOr<ReplayStats> dat =
      ReplayTraceFile(Write("sched.dat", SchedDat()), {}, from_dat);
  ASSERT_TRUE(dat.ok()) << dat.status();
  RecordingSink from_text;
  const absl::StatusOr<ReplayStats> text =
      ReplayTraceText(report, {}, from_text);
  ASSERT_TRUE(text.ok()) << text.status();

  EXPECT_TRUE(dat->trace_dat);
  EXPECT_EQ(dat->lines, 6);  // records; the text adds its "cpus=1" line
  EXPECT_EQ(text->lines, 7);
  EXPECT_EQ(dat->malformed_lines, 0);
  EXPECT_EQ(text->malformed_lines, 0);
  EXPECT_EQ(dat->switch_events, 2);
  EXPECT_EQ(dat->migrate_events, 1);
  EXPECT_EQ(dat->exit_events, 1);
  // bash ran from 5.000000000 to 5.000005000 on CPU 0.
  EXPECT_EQ(dat->runtime_ns, std::vector<int64_t>{5000});
  EXPECT_EQ(EventTexts(from_dat), EventTexts(from_text));
}

TEST_F(TraceDatTest, FileWithoutSchedFormatsIsFailedPrecondition) {
  TinyTraceDat dat(5'000'000'000);
  dat.AddFormat("irq", EventFormat("irq_handler_entry", 400,
                                   {{"int irq", 8, 4}}));
  dat.AddRecord(0, CommonFields(400, 7) + Le(11, 4));
  const std::string path = Write("irq.dat", dat.Bytes());
  const absl::Status status =
      ReadTraceDat(path, [](const TraceLine&) { return absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("captured without the sched"));
}

TEST_F(TraceDatTest, SwitchFormatWithoutNextPidIsInvalidArgument) {
  TinyTraceDat dat(5'000'000'000);
  std::vector<FormatField> fields = SwitchFields();
  fields.pop_back();  // next_pid
  dat.AddFormat("sched", EventFormat("sched_switch", kSwitchId, fields));
  const std::string path = Write("old.dat", dat.Bytes());
  const absl::Status status =
      ReadTraceDat(path, [](const TraceLine&) { return absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(),
              HasSubstr("the sched_switch format has no field 'next_pid'"));
}

// The kernel's prev_state is a long after the switch's other fields here
// (offset 48, 8 bytes): 0x100 is a preempted task (R+), 0 a runnable one
// (R), 0x10 a dead one (X), 0x80 an idle kernel thread (I).
TEST_F(TraceDatTest, ReadsPrevStateAsTheTextReplayDoes) {
  TinyTraceDat dat(5'000'000'000);
  std::vector<FormatField> fields = SwitchFields();
  fields.push_back({"long prev_state", 48, 8});
  dat.AddFormat("sched", EventFormat("sched_switch", kSwitchId, fields));
  for (const uint64_t state : {0x100, 0x0, 0x10, 0x80}) {
    dat.AddRecord(10, SwitchRecord(7, "bash", 0, "swapper/0") + Le(state, 8));
  }
  std::vector<bool> runnable;
  const absl::Status status = ReadTraceDat(
      Write("state.dat", dat.Bytes()), [&](const TraceLine& line) {
        EXPECT_EQ(line.kind, TraceLine::Kind::kSwitch) << line.error;
        runnable.push_back(line.prev_runnable);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(runnable, (std::vector<bool>{true, true, false, false}));
}

TEST_F(TraceDatTest, PrevStateOfAnOddSizeIsInvalidArgument) {
  TinyTraceDat dat(5'000'000'000);
  std::vector<FormatField> fields = SwitchFields();
  fields.push_back({"char prev_state[2]", 48, 2});
  dat.AddFormat("sched", EventFormat("sched_switch", kSwitchId, fields));
  const absl::Status status = ReadTraceDat(
      Write("odd.dat", dat.Bytes()),
      [](const TraceLine&) { return absl::OkStatus(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("the sched_switch field 'prev_state' has size 2"));
}

TEST_F(TraceDatTest, RecordShorterThanItsFormatIsMalformedAndTheRestCount) {
  TinyTraceDat dat(5'000'000'000);
  dat.AddFormat("sched", SwitchFormat());
  // Cut after prev_pid: next_comm and next_pid are missing.
  dat.AddRecord(0, SwitchRecord(0, "swapper/0", 7, "bash").substr(0, 28));
  dat.AddRecord(42, SwitchRecord(0, "swapper/0", 7, "bash"));
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(Write("short.dat", dat.Bytes()), {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 1);
  ASSERT_EQ(stats->first_malformed.size(), 1u);
  EXPECT_EQ(stats->first_malformed[0].line_number, 1);
  EXPECT_EQ(stats->first_malformed[0].error,
            "sched_switch record is shorter than its format");
  EXPECT_EQ(stats->first_malformed[0].text, "[000] 5.000000000: record");
  EXPECT_EQ(stats->switch_events, 1);  // the whole record after it
  EXPECT_EQ(stats->first_timestamp_ns, 5'000'000'042);
}

}  // namespace
}  // namespace schedcache
