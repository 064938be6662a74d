// Captures a workload the test owns into a trace-cmd .dat file and checks
// that ReplayTraceFile (the reader behind `schedcache ab --input trace:`)
// gives the same events from the .dat as from Debian's `trace-cmd report -t`
// text of it. `trace-cmd record` needs the function tracer, which not every
// kernel has; so the sched events are enabled on a private tracefs instance
// by hand and `trace-cmd extract -B` writes that instance's buffer.
// Needs root, tracefs and trace-cmd; skipped, saying which is missing,
// without them.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using test_support::CommandResult;
using test_support::RunCommand;
using test_support::FindInPath;
using test_support::ReadFile;
using test_support::PinnedBusyThreadScript;

constexpr char kTracefs[] = "/sys/kernel/tracing";

// WriteControl writes `value` to the tracefs file at `path`; false on error.
bool WriteControl(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return out.good();
}

// Instance is a private tracefs instance, removed when it goes (trace-cmd
// extract may already have removed it).
class Instance {
 public:
  explicit Instance(std::string name)
      : name_(std::move(name)),
        dir_(absl::StrCat(kTracefs, "/instances/", name_)) {}
  ~Instance() { ::rmdir(dir_.c_str()); }

  // Create makes it and enables the sched events replay reads; an error
  // message, empty on success.
  std::string Create() {
    if (::mkdir(dir_.c_str(), 0700) != 0) {
      return absl::StrCat("mkdir ", dir_, ": ", std::strerror(errno));
    }
    for (const char* event :
         {"sched_switch", "sched_migrate_task", "sched_process_exit"}) {
      const std::string enable =
          absl::StrCat(dir_, "/events/sched/", event, "/enable");
      if (!WriteControl(enable, "1")) return "cannot write " + enable;
    }
    return "";
  }
  bool SetTracing(bool on) {
    return WriteControl(dir_ + "/tracing_on", on ? "1" : "0");
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::string dir_;
};

TEST(TraceDatReplay, ExtractedDatReplaysExactlyAsItsReportText) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root: a tracefs instance and trace-cmd extract";
  }
  if (::access(absl::StrCat(kTracefs, "/instances").c_str(), W_OK) != 0) {
    GTEST_SKIP() << "no writable tracefs at " << kTracefs;
  }
  const std::optional<std::string> trace_cmd = FindInPath("trace-cmd");
  if (!trace_cmd) {
    GTEST_SKIP() << "trace-cmd not on PATH (Debian package trace-cmd)";
  }

  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      ("trace_dat_replay." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string dat = (dir / "capture.dat").string();
  const std::string report = (dir / "capture.txt").string();
  const std::string pid_file = (dir / "busy.pid").string();

  Instance instance("schedcache_dat_" + std::to_string(::getpid()));
  const std::string created = instance.Create();
  ASSERT_EQ(created, "");
  ASSERT_TRUE(instance.SetTracing(true));
  // The busy thread shares one CPU with another spinner, so the trace sees
  // it come in at every slice and go out for the last time (after its exit)
  // before tracing stops (PinnedBusyThreadScript).
  const CommandResult workload =
      RunCommand({"/bin/sh", "-c", PinnedBusyThreadScript(pid_file)});
  ASSERT_TRUE(instance.SetTracing(false));
  ASSERT_EQ(workload.exit_code, 0) << workload.err;
  const int busy_tid = std::atoi(ReadFile(pid_file).c_str());
  ASSERT_GT(busy_tid, 0) << "no pid in " << pid_file;

  const CommandResult extract = RunCommand(
      {*trace_cmd, "extract", "-B", instance.name(), "-o", dat});
  ASSERT_EQ(extract.exit_code, 0) << extract.err;
  // -t: nanosecond timestamps, as the .dat holds them.
  const CommandResult text = RunCommand({*trace_cmd, "report", "-t", dat});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  std::ofstream(report) << text.out;

  RecordingSink from_dat;
  const absl::StatusOr<ReplayStats> dat_stats =
      ReplayTraceFile(dat, {}, from_dat);
  ASSERT_TRUE(dat_stats.ok()) << dat_stats.status();
  RecordingSink from_text;
  const absl::StatusOr<ReplayStats> text_stats =
      ReplayTraceFile(report, {}, from_text);
  ASSERT_TRUE(text_stats.ok()) << text_stats.status();

  EXPECT_TRUE(dat_stats->trace_dat);
  EXPECT_FALSE(text_stats->trace_dat);
  EXPECT_EQ(dat_stats->malformed_lines, 0);
  EXPECT_EQ(text_stats->malformed_lines, 0)
      << (text_stats->first_malformed.empty()
              ? ""
              : text_stats->first_malformed[0].error + ": " +
                    text_stats->first_malformed[0].text);
  EXPECT_GT(dat_stats->switch_events, 0);
  EXPECT_EQ(dat_stats->switch_events, text_stats->switch_events);
  EXPECT_EQ(dat_stats->migrate_events, text_stats->migrate_events);
  EXPECT_EQ(dat_stats->exit_events, text_stats->exit_events);
  EXPECT_EQ(dat_stats->first_timestamp_ns, text_stats->first_timestamp_ns);
  EXPECT_EQ(dat_stats->last_timestamp_ns, text_stats->last_timestamp_ns);
  EXPECT_EQ(dat_stats->runtime_ns, text_stats->runtime_ns);
  EXPECT_EQ(EventTexts(from_dat), EventTexts(from_text));

  int64_t busy_ns = 0;
  for (const Sample& sample : from_dat.Samples()) {
    if (sample.tid == busy_tid) busy_ns += sample.delta_ns;
  }
  // It had about half of one CPU for 0.3 s; at least 10 ms of it shows its
  // runtime was read from the .dat.
  EXPECT_GE(busy_ns, 10'000'000) << "tid " << busy_tid;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace schedcache
