// Records a workload the test owns with Debian's `perf record -e
// sched:sched_switch -a` and replays the `perf script` text through
// ReplayTraceFile, the reader behind `schedcache ab --input trace:`.
// Needs root and perf; skipped, saying which is missing, without them.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;
using test_support::FindInPath;
using test_support::PinnedBusyThreadScript;
using test_support::ReadFile;

TEST(PerfScriptReplay, RecordedBusyThreadReplaysWithRuntimeAndNoMalformedLine) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root: perf record -a of sched:sched_switch";
  }
  const std::optional<std::string> perf = FindInPath("perf");
  if (!perf) GTEST_SKIP() << "perf not on PATH (Debian package linux-perf)";

  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      ("perf_script_replay." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string data = (dir / "perf.data").string();
  const std::string pid_file = (dir / "busy.pid").string();
  const std::string text = (dir / "perf.txt").string();

  // The busy thread shares one CPU with another spinner, so perf sees it
  // come in at every slice (PinnedBusyThreadScript says why that matters).
  const CommandResult record =
      RunCommand({*perf, "record", "-q", "-e", "sched:sched_switch", "-a",
                  "-o", data, "--", "/bin/sh", "-c",
                  PinnedBusyThreadScript(pid_file)});
  if (record.exit_code != 0) {
    GTEST_SKIP() << "perf record refused (exit " << record.exit_code
                 << "): " << record.err;
  }
  const int busy_tid = std::atoi(ReadFile(pid_file).c_str());
  ASSERT_GT(busy_tid, 0) << "no pid in " << pid_file;

  const CommandResult script = RunCommand({*perf, "script", "-i", data});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  std::ofstream(text) << script.out;

  RecordingSink sink;
  absl::StatusOr<ReplayStats> stats = ReplayTraceFile(text, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0)
      << (stats->first_malformed.empty()
              ? ""
              : stats->first_malformed[0].error + ": " +
                    stats->first_malformed[0].text);
  EXPECT_GT(stats->switch_events, 0);
  int64_t busy_ns = 0;
  for (const Sample& sample : sink.Samples()) {
    if (sample.tid == busy_tid) busy_ns += sample.delta_ns;
  }
  // It had about half of one CPU for 0.3 s; at least 10 ms of it shows its
  // runtime was attributed, not lost.
  EXPECT_GE(busy_ns, 10'000'000) << "tid " << busy_tid;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace schedcache
