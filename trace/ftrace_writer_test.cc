#include "trace/ftrace_writer.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "events/recording_sink.h"
#include "events/sched_state_machine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/line_reader.h"
#include "trace/trace_line.h"
#include "trace/trace_replay.h"
#include "trace/zstd_stream.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// WithoutNewline views `line` without its '\n': ParseTraceLine's fields
// view its input, so it must outlive the TraceLine (a substr temporary
// would not).
std::string_view WithoutNewline(const std::string& line) {
  return std::string_view(line).substr(0, line.size() - 1);
}

TEST(FtraceWriter, SwitchLineParsesBackWithEveryField) {
  const std::string line =
      FormatSwitchLine(5'182'000'000'123, 3, TraceTask{"Web Content", 77, 70},
                       /*prev_state=*/1, TraceTask{"swapper/3", 0, 0});
  EXPECT_EQ(line,
            "     Web Content-77      (     70) [003] 5182.000000123: "
            "sched_switch: prev_comm=Web Content prev_pid=77 prev_prio=120 "
            "prev_state=S ==> next_comm=swapper/3 next_pid=0 next_prio=120\n");
  const TraceLine parsed = ParseTraceLine(WithoutNewline(line));
  ASSERT_EQ(parsed.kind, TraceLine::Kind::kSwitch) << parsed.error;
  EXPECT_EQ(parsed.timestamp_ns, 5'182'000'000'123);
  EXPECT_EQ(parsed.cpu, 3);
  EXPECT_EQ(parsed.task_pid, 77);
  EXPECT_EQ(parsed.task_tgid, 70);
  EXPECT_EQ(parsed.prev_comm, "Web Content");
  EXPECT_EQ(parsed.next_pid, 0);
}

// record's --output text must replay as the live switch ran: the letter
// written for prev_state's bits parses back to the same runnable reading.
TEST(FtraceWriter, PrevStateLettersReplayAsTheLiveSwitchRan) {
  struct Case {
    int64_t bits;
    const char* letter;
    bool runnable;
  };
  for (const Case& c : {Case{0x0, "R", true}, Case{0x100, "R", true},
                        Case{0x1, "S", false}, Case{0x2, "D", false},
                        Case{0x10, "X", false}, Case{0x20, "Z", false},
                        Case{0x80, "I", false}}) {
    const std::string line =
        FormatSwitchLine(1'000'000'000, 0, TraceTask{"a", 5, 5}, c.bits,
                         TraceTask{"swapper/0", 0, 0});
    EXPECT_THAT(line, HasSubstr(std::string(" prev_state=") + c.letter +
                                " ==> "));
    EXPECT_EQ(PrevStateIsRunnable(c.bits), c.runnable) << c.bits;
    const TraceLine parsed = ParseTraceLine(WithoutNewline(line));
    ASSERT_EQ(parsed.kind, TraceLine::Kind::kSwitch) << parsed.error;
    EXPECT_EQ(parsed.prev_runnable, c.runnable) << line;
  }
}

TEST(FtraceWriter, UnknownTgidIsDashesAndMigrateAndExitParse) {
  const std::string migrate =
      FormatMigrateLine(1'000, 1, TraceTask{"kworker/1:0", 20, 0},
                        TraceTask{"cc1", 30, 29}, 0, 1);
  EXPECT_THAT(migrate, HasSubstr("(-----) [001] 0.000001000: "));
  const TraceLine m = ParseTraceLine(WithoutNewline(migrate));
  ASSERT_EQ(m.kind, TraceLine::Kind::kMigrate) << m.error;
  EXPECT_EQ(m.task_tgid, 0);
  EXPECT_EQ(m.pid, 30);
  EXPECT_EQ(m.orig_cpu, 0);
  EXPECT_EQ(m.dest_cpu, 1);
  const std::string exit =
      FormatExitLine(2'000, 0, TraceTask{"cc1", 30, 29}, /*group_dead=*/true);
  EXPECT_THAT(exit, HasSubstr("group_dead=1\n"));
  const TraceLine e = ParseTraceLine(WithoutNewline(exit));
  ASSERT_EQ(e.kind, TraceLine::Kind::kExit) << e.error;
  EXPECT_EQ(e.pid, 30);
  const std::string fork =
      FormatForkLine(3'000, 0, TraceTask{"make", 10, 10}, 31);
  EXPECT_EQ(ParseTraceLine(WithoutNewline(fork)).kind,
            TraceLine::Kind::kOtherSched);
}

// A capture written plain and gzip-compressed replays to the same runtime.
TEST(FtraceWriter, WrittenFileReplaysPlainGzipAndZstd) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  for (const std::string name :
       {"plain.trace", "packed.trace.gz", "packed.trace.zst"}) {
    const std::string path =
        (dir / ("ftrace_writer_test_" + std::to_string(getpid()) + name))
            .string();
    absl::StatusOr<std::unique_ptr<FtraceWriter>> writer =
        FtraceWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    // Thread 11 of process 10 runs on CPU 2 from 1 ms to 3.5 ms.
    (*writer)->Write(FormatSwitchLine(1'000'000, 2, TraceTask{"idle", 0, 0}, 0,
                                      TraceTask{"w", 11, 10}));
    (*writer)->Write(FormatSwitchLine(3'500'000, 2, TraceTask{"w", 11, 10}, 1,
                                      TraceTask{"idle", 0, 0}));
    EXPECT_EQ((*writer)->lines(), 2);
    ASSERT_TRUE((*writer)->Close().ok());
    RecordingSink sink;
    absl::StatusOr<ReplayStats> stats =
        ReplayTraceFile(path, TraceOptions{}, sink);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->malformed_lines, 0);
    EXPECT_EQ(stats->switch_events, 2);
    // 3.5 ms - 1 ms = 2.5 ms on CPU 2, cut by ticks at 4 ms steps: none.
    ASSERT_EQ(stats->runtime_ns.size(), 3u);
    EXPECT_EQ(stats->runtime_ns[2], 2'500'000);
    std::filesystem::remove(path);
  }
}

// A .zst file is Zstandard from its first byte, and a capture longer than
// the writer's 128 KiB block (several compressed blocks, one frame) reads
// back line for line.
TEST(FtraceWriter, ZstdFileHoldsEveryLineOfALongCapture) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("ftrace_writer_test_" + std::to_string(getpid()) +
                             "long.trace.zst"))
                               .string();
  absl::StatusOr<std::unique_ptr<FtraceWriter>> writer =
      FtraceWriter::Open(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // 20000 switch lines of about 150 bytes: about 3 MB of text.
  std::vector<std::string> written;
  for (int i = 0; i < 20000; ++i) {
    written.push_back(FormatSwitchLine(int64_t{1'000'000} * (i + 1), i % 4,
                                       TraceTask{"a", 11, 10}, 1,
                                       TraceTask{"b", 20 + i, 19}));
    (*writer)->Write(written.back());
  }
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ((*writer)->lines(), 20000);
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const std::string& line : written) {
    absl::StatusOr<std::optional<std::string_view>> got = reader->NextLine();
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(got->has_value());
    ASSERT_EQ(**got, WithoutNewline(line));
  }
  absl::StatusOr<std::optional<std::string_view>> end = reader->NextLine();
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_FALSE(end->has_value());
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_TRUE(StartsZstdFrame(std::string_view(magic, 4)));
  std::filesystem::remove(path);
}

TEST(FtraceWriter, OpenNamesThePathItCannotCreate) {
  absl::StatusOr<std::unique_ptr<FtraceWriter>> writer =
      FtraceWriter::Open("/nonexistent-dir/x.trace");
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(writer.status().message(), HasSubstr("/nonexistent-dir/x.trace"));
}

}  // namespace
}  // namespace schedcache
