#include "collector/cgroup_paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collector/live_converter.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/ftrace_writer.h"
#include "trace/trace_replay.h"

namespace schedcache::host {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// A cgroup v2 host: one line.
constexpr char kUnified[] = "0::/system.slice/redis.service\n";
// A hybrid host (this project's CI host's shape): v1 controllers, the cpu
// one shared with cpuacct, and an unused v2 hierarchy.
constexpr char kHybrid[] =
    "9:name=systemd:/user.slice\n"
    "4:memory:/jobs/a\n"
    "2:cpu,cpuacct:/jobs/a b:c\n"
    "1:cpuset:/\n"
    "0::/\n";

TEST(ParseCgroupFile, TakesTheV2LineOfAV2Host) {
  EXPECT_EQ(ParseCgroupFile(kUnified, "f").value(),
            "/system.slice/redis.service");
}

TEST(ParseCgroupFile, TakesTheCpuControllersLineOverTheV2Line) {
  // Blanks and ':' belong to the path: it is everything after the second
  // ':' of its line.
  EXPECT_EQ(ParseCgroupFile(kHybrid, "f").value(), "/jobs/a b:c");
  EXPECT_EQ(ParseCgroupFile("3:cpuacct:/x\n5:cpu:/y\n", "f").value(), "/y");
}

TEST(ParseCgroupFile, AFileWithoutEitherLineIsNotFoundNamingTheFile) {
  const absl::StatusOr<std::string> path =
      ParseCgroupFile("4:memory:/a\n1:cpuset:/\n", "/proc/7/cgroup");
  EXPECT_TRUE(absl::IsNotFound(path.status())) << path.status();
  EXPECT_THAT(path.status().message(), HasSubstr("/proc/7/cgroup"));
  EXPECT_TRUE(absl::IsNotFound(ParseCgroupFile("", "f").status()));
}

TEST(ParseCgroupFile, APathThatIsNotAbsoluteIsInvalidNamingTheLine) {
  const absl::StatusOr<std::string> path = ParseCgroupFile("0::\n", "f");
  EXPECT_TRUE(absl::IsInvalidArgument(path.status())) << path.status();
  EXPECT_THAT(path.status().message(), HasSubstr("\"0::\""));
}

// A fake procfs in a temporary directory: PID/status and PID/cgroup files
// written by hand.
class FakeProc {
 public:
  FakeProc()
      : root_(std::filesystem::path(::testing::TempDir()) /
              absl::StrCat("fake_proc_cgroup_", getpid(), "_",
                           ::testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name())) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }

  // AddProcess writes process `pid` (one thread) in cgroup file `cgroup`.
  void AddProcess(int pid, const std::string& cgroup) {
    const std::filesystem::path dir = root_ / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "status") << "Name:\tx\nTgid:\t" << pid << "\n";
    std::ofstream(dir / "cgroup") << cgroup;
  }
  std::string root() const { return root_.string(); }
  std::string path(const std::string& name) const {
    return (root_ / name).string();
  }

 private:
  std::filesystem::path root_;
};

TEST(CgroupPaths, ReadsAProcessAndSaysNotFoundForOneGone) {
  FakeProc proc;
  proc.AddProcess(42, kHybrid);
  const CgroupPaths paths(proc.root());
  EXPECT_EQ(paths.Read(42).value(), "/jobs/a b:c");
  const absl::StatusOr<std::string> gone = paths.Read(43);
  EXPECT_TRUE(absl::IsNotFound(gone.status())) << gone.status();
  EXPECT_THAT(gone.status().message(), HasSubstr("/43/cgroup"));
}

RawSchedEvent Switch(uint64_t t, int prev, int next, const char* next_comm) {
  RawSchedEvent e;
  e.kind = SchedEventKind::kSwitch;
  e.timestamp_ns = t;
  e.cpu = 0;
  e.prev_pid = prev;
  e.prev_state = 1;
  e.next_pid = next;
  std::snprintf(e.next_comm.data(), e.next_comm.size(), "%s", next_comm);
  return e;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The converter writes each process's cgroup line before the first line
// naming it, and again after its exec; a process without a readable path
// gets none and is counted; the text replays with the paths, unescaped.
TEST(LiveConverterCgroups, WritesEachProcesssPathBeforeItsFirstLine) {
  FakeProc proc;
  proc.AddProcess(100, "0::/a b\n");  // a blank: written \040
  proc.AddProcess(200, "0::/b\n");
  proc.AddProcess(300, "4:memory:/m\n");  // no path for schedcache
  const std::string text = proc.path("capture.txt");
  absl::StatusOr<std::unique_ptr<FtraceWriter>> trace =
      FtraceWriter::Open(text);
  ASSERT_TRUE(trace.ok()) << trace.status();
  RecordingSink sink;
  LiveConverter converter(/*hz=*/250, sink, trace->get(), proc.root());
  converter.OnEvent(Switch(1'000'000, 0, 100, "a"));
  converter.OnEvent(Switch(2'000'000, 100, 200, "b"));
  // The paths are read as the records are converted.
  ASSERT_TRUE(converter.Release(/*horizon_ns=*/2'500'000).ok());
  // 200 moves to cgroup /c and execs: its path is read again after the
  // exec line.
  proc.AddProcess(200, "0::/c\n");
  RawSchedEvent exec;
  exec.kind = SchedEventKind::kExec;
  exec.timestamp_ns = 3'000'000;
  exec.cpu = 0;
  exec.pid = 200;
  exec.old_pid = 200;
  exec.filename = "/bin/c";
  converter.OnEvent(exec);
  converter.OnEvent(Switch(4'000'000, 200, 300, "m"));
  converter.OnEvent(Switch(5'000'000, 300, 100, "a"));
  ASSERT_TRUE(converter.Finish().ok());
  ASSERT_TRUE((*trace)->Close().ok());

  const std::vector<std::string> lines = Lines(text);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0], "# schedcache_cgroup: 100 /a\\040b");
  EXPECT_THAT(lines[1], HasSubstr("next_pid=100"));
  EXPECT_EQ(lines[2], "# schedcache_cgroup: 200 /b");
  EXPECT_THAT(lines[3], HasSubstr("next_pid=200"));
  EXPECT_THAT(lines[4], HasSubstr("sched_process_exec"));
  EXPECT_EQ(lines[5], "# schedcache_cgroup: 200 /c");
  EXPECT_THAT(lines[6], HasSubstr("next_pid=300"));  // 300: no path
  EXPECT_THAT(lines[7], HasSubstr("next_pid=100"));  // 100: announced
  EXPECT_EQ(converter.cgroup_paths(), 3u);
  EXPECT_EQ(converter.cgroup_unread(), 1u);

  std::vector<std::pair<int32_t, std::string>> heard;
  TraceOptions options;
  options.on_cgroup = [&heard](int32_t tgid, std::string_view path) {
    heard.emplace_back(tgid, std::string(path));
  };
  RecordingSink replayed;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(text, options, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->cgroup_lines, 3);
  EXPECT_THAT(heard, ElementsAre(Pair(100, "/a b"), Pair(200, "/b"),
                                 Pair(200, "/c")));
}

}  // namespace
}  // namespace schedcache::host
