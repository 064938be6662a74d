// The .dat reader's checks that need no kernel: how a trace-cmd file is told
// apart (by its magic bytes, never its name) and the errors for files that
// are not one or are cut short. tests/trace_dat_replay_test.cc reads real
// captures.
#include "trace/trace_dat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace schedcache
