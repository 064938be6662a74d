// `schedcache record` on the real kernel: a schedcached process, a workload
// this test owns (a process whose busy threads migrate between the CPUs,
// and one that forks children and exits), a 3 s capture into a session and
// a trace file at once; then what the session says about the workload, and
// the trace file replayed through `ab --input trace:` and ReplayTraceFile.
// That the exited process leaves the session waits for ProcessExit on the
// Ingest wire (the exits branch), which the collector then sends.
// Needs root and tracefs with the sched events; skipped, saying which is
// missing, elsewhere.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "eval/ab/cache_groups.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using test_support::CommandResult;
using test_support::Process;
using test_support::RunCommand;
using test_support::TempDir;
using test_support::ReadFile;
using ::testing::HasSubstr;

const std::string kBin = std::string(SCHEDCACHE_BINARY_DIR) + "/bin/";
constexpr int kBusyThreads = 3;
constexpr int64_t kTickNs = 4'000'000;  // --hz 250

// Spin burns CPU for `length`.
void Spin(absl::Duration length) {
  const absl::Time end = absl::Now() + length;
  while (absl::Now() < end) {
  }
}

// StartBusyProcess forks "sc-live-busy": kBusyThreads threads that spin
// 3 ms and sleep 1 ms in turn until the process is killed (more runnable
// threads than the machine's CPUs, so they are switched and migrated), and
// a main thread waiting for them: kBusyThreads + 1 threads in /proc for as
// long as the collector may look.
pid_t StartBusyProcess() {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_NAME, "sc-live-busy");
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives a crashed test
  std::vector<std::thread> threads;
  for (int i = 0; i < kBusyThreads; ++i) {
    threads.emplace_back([] {
      while (true) {
        Spin(absl::Milliseconds(3));
        absl::SleepFor(absl::Milliseconds(1));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  _exit(0);
}

// StartForkingProcess forks "sc-live-fork", which for `run_for` spins
// 20 ms, forks a child that spins 5 ms and exits, reaps it, and then exits
// itself: a process that ends while the capture runs.
pid_t StartForkingProcess(absl::Duration run_for) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_NAME, "sc-live-fork");
  const absl::Time end = absl::Now() + run_for;
  while (absl::Now() < end) {
    Spin(absl::Milliseconds(20));
    const pid_t child = fork();
    if (child == 0) {
      Spin(absl::Milliseconds(5));
      _exit(0);
    }
    waitpid(child, nullptr, 0);
  }
  _exit(0);
}

// StartThreadChurn forks "sc-live-churn", which after `delay` (record's
// start-up) creates kChurnThreads threads one after another, each spinning
// 2 ms and exiting at once, far sooner than record reads /proc; each
// thread's tid goes to `tids_fd` as an int.
constexpr int kChurnThreads = 40;
pid_t StartThreadChurn(absl::Duration delay, int tids_fd) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_NAME, "sc-live-churn");
  absl::SleepFor(delay);
  for (int i = 0; i < kChurnThreads; ++i) {
    std::thread([tids_fd] {
      const int tid = static_cast<int>(gettid());
      if (write(tids_fd, &tid, sizeof(tid)) != sizeof(tid)) _exit(1);
      Spin(absl::Milliseconds(2));
    }).join();
  }
  _exit(0);
}

// RuntimeNs reads the "runtimeNs": [a, b, ...] array of record's JSON.
std::vector<int64_t> RuntimeNs(const std::string& json) {
  const size_t at = json.find("\"runtimeNs\": [");
  if (at == std::string::npos) return {};
  const size_t begin = at + 14;
  const std::string list = json.substr(begin, json.find(']', begin) - begin);
  std::vector<int64_t> values;
  for (const absl::string_view item : absl::StrSplit(list, ", ")) {
    int64_t value = 0;
    if (absl::SimpleAtoi(item, &value)) values.push_back(value);
  }
  return values;
}

class RecordLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "not root (euid " << geteuid()
                   << "): tracefs instances need root";
    }
    if (!std::filesystem::exists("/sys/kernel/tracing/events/sched") &&
        !std::filesystem::exists("/sys/kernel/debug/tracing/events/sched")) {
      GTEST_SKIP() << "no tracefs: /sys/kernel/tracing/events/sched does not "
                      "exist";
    }
    socket_ = dir_.path() + "/schedcached.sock";
    server_ = Process::Start({kBin + "schedcached", "--listen=unix:" + socket_},
                             dir_.path() + "/server.log");
    ASSERT_NE(server_, nullptr);
    client::Options options;
    options.address = "unix:" + socket_;
    client_ = client::Client::Connect(options);
    ASSERT_TRUE(client_->WaitForReady().ok());
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), kBin + "schedcache");
    args.push_back("--server=unix:" + socket_);
    return RunCommand(args);
  }

  TempDir dir_;
  std::string socket_;
  std::unique_ptr<Process> server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(RecordLiveTest, CaptureFeedsTheSessionAndReplaysToTheSameRuntime) {
  // One LLC over all of this host's CPUs, with enable=on: a CPU alone in
  // its LLC has no cache-sharing domain, and the scan skips it as the
  // kernel's does (docs/MODEL.md, "Time in jiffies"), so on a host whose
  // CPUs each have an L3 of their own (this project's 2-CPU VMs) the host
  // topology would leave nothing to scan.
  const std::string one_llc = absl::StrCat(
      "synthetic:pack:1 l3:1 core:", sysconf(_SC_NPROCESSORS_CONF), " pu:1");
  ASSERT_EQ(Cli({"session", "create", "--name", "live", "--topology", one_llc,
                 "--policies", "full-scan,visited-scan", "--set", "enable=on"})
                .exit_code,
            0);
  const pid_t busy = StartBusyProcess();
  const pid_t forker = StartForkingProcess(absl::Milliseconds(1500));
  const std::string trace = dir_.path() + "/capture.trace.gz";
  const CommandResult record =
      Cli({"record", "--session", "live", "--duration", "3", "--output", trace,
           "--format", "json"});
  ASSERT_EQ(record.exit_code, 0) << record.err;
  waitpid(forker, nullptr, 0);

  // The busy process: the session has its samples, and its thread count.
  const CommandResult recommend =
      Cli({"recommend", "--session", "live", "--tgid", std::to_string(busy),
           "--format", "json"});
  kill(busy, SIGKILL);
  waitpid(busy, nullptr, 0);
  ASSERT_EQ(recommend.exit_code, 0) << recommend.err;
  EXPECT_THAT(recommend.out,
              HasSubstr(absl::StrCat("\"nrThreads\":", kBusyThreads + 1)));
  EXPECT_THAT(recommend.out, HasSubstr("\"llcOccupancy\""));
  EXPECT_THAT(recommend.out, ::testing::Not(HasSubstr("NO_DATA")));
  const CommandResult report = Cli({"report", "--session", "live"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out,
              HasSubstr("collector losses: 0 ring buffer, 0 unparsed, 0 late"));
  EXPECT_THAT(record.out, HasSubstr("\"rejected\": 0"));
  // The forking process exited during the capture: its sched_process_exit
  // became a ProcessExit, so the session no longer tracks it.
  const CommandResult gone =
      Cli({"recommend", "--session", "live", "--tgid", std::to_string(forker)});
  EXPECT_NE(gone.exit_code, 0) << gone.out;
  EXPECT_THAT(gone.err, HasSubstr(absl::StrCat("process tgid ", forker,
                                               " is not tracked")));

  // The same capture as text: ab reads every line of it...
  const std::string ab_json = dir_.path() + "/ab.json";
  const CommandResult ab = RunCommand(
      {kBin + "schedcache", "ab", "--input", "trace:" + trace, "--topology",
       "host", "--policies", "full-scan", "--json", ab_json});
  ASSERT_EQ(ab.exit_code, 0) << ab.err;
  // A 64-bit count, so a string in the JSON (docs/EVALUATION.md).
  EXPECT_THAT(ReadFile(ab_json), HasSubstr("\"malformedLines\":\"0\""));
  // ...and the forking process, which ended during the capture, ran in it.
  RecordingSink replayed;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(trace, TraceOptions{}, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  int64_t forker_ns = 0;
  for (const Sample& sample : replayed.Samples()) {
    if (sample.tgid == forker) forker_ns += sample.delta_ns;
  }
  EXPECT_GT(forker_ns, 0) << "no runtime of the forking process " << forker;
  // Per CPU, the replay's runtime is the live session's within one tick.
  const std::vector<int64_t> live = RuntimeNs(record.out);
  ASSERT_FALSE(live.empty()) << record.out;
  ASSERT_EQ(live.size(), stats->runtime_ns.size());
  for (size_t cpu = 0; cpu < live.size(); ++cpu) {
    EXPECT_LE(std::abs(live[cpu] - stats->runtime_ns[cpu]), kTickNs)
        << "cpu " << cpu;
  }
}

// Threads that exit at once are filed under their process, in the capture
// as live: task_newtask says so in trace order (docs/LIVE.md, "Processes").
TEST_F(RecordLiveTest, ShortLivedThreadsReplayUnderTheirProcess) {
  int tids[2];
  ASSERT_EQ(pipe(tids), 0);
  const pid_t churn = StartThreadChurn(absl::Seconds(1), tids[1]);
  close(tids[1]);
  const std::string trace = dir_.path() + "/churn.trace.gz";
  const CommandResult record =
      RunCommand({kBin + "schedcache", "record", "--duration", "3",
                  "--output", trace, "--format", "json"});
  ASSERT_EQ(record.exit_code, 0) << record.err;
  EXPECT_THAT(record.err, ::testing::Not(HasSubstr("task_newtask")));
  int status = 0;
  waitpid(churn, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::set<int32_t> threads;
  for (int tid = 0; read(tids[0], &tid, sizeof(tid)) == sizeof(tid);) {
    threads.insert(tid);
  }
  close(tids[0]);
  ASSERT_EQ(threads.size(), static_cast<size_t>(kChurnThreads));

  RecordingSink replayed;
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(trace, TraceOptions{}, replayed);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_GE(stats->new_task_events, kChurnThreads);
  std::set<int32_t> seen;
  for (const Sample& sample : replayed.Samples()) {
    if (!threads.contains(sample.tid)) continue;
    seen.insert(sample.tid);
    EXPECT_EQ(sample.tgid, churn) << "thread " << sample.tid;
  }
  for (const HandOver& hand_over : replayed.HandOvers()) {
    if (!threads.contains(hand_over.tid)) continue;
    EXPECT_EQ(hand_over.tgid, churn) << "thread " << hand_over.tid;
  }
  // Each spun 2 ms: every one of them ran in the capture.
  EXPECT_EQ(seen.size(), threads.size());
}

// CgroupMount is where the cgroup hierarchy CgroupPaths reads is mounted
// (collector/cgroup_paths.h: the v1 cpu controller's when this process has
// one, else cgroup v2), or why there is none to use.
struct CgroupMount {
  std::string path;     // empty: none, `why` says
  std::string why;
};

// HasToken says whether the comma-separated `list` holds `token`.
bool HasToken(absl::string_view list, absl::string_view token) {
  for (const absl::string_view item : absl::StrSplit(list, ',')) {
    if (item == token) return true;
  }
  return false;
}

CgroupMount FindCgroupMount() {
  const std::string self = ReadFile("/proc/self/cgroup");
  bool v1_cpu = false;
  for (const absl::string_view line : absl::StrSplit(self, '\n')) {
    const std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() == 3 && HasToken(parts[1], "cpu")) {
      v1_cpu = true;
    }
  }
  for (const absl::string_view line :
       absl::StrSplit(ReadFile("/proc/self/mounts"), '\n')) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    if (f.size() < 4) continue;
    if ((v1_cpu && f[2] == "cgroup" && HasToken(f[3], "cpu")) ||
        (!v1_cpu && f[2] == "cgroup2")) {
      return {std::string(f[1]), ""};
    }
  }
  return {"", v1_cpu ? "this process has a cgroup v1 cpu controller line in "
                       "/proc/self/cgroup, but no cgroup mount with the cpu "
                       "option is in /proc/self/mounts"
                     : "no cgroup2 file system is mounted (/proc/self/mounts)"};
}

// StartCgroupSpinner forks a process named `name` that, once it reads a
// byte from `go`, spins 3 ms and sleeps 1 ms in turn until killed.
pid_t StartCgroupSpinner(const char* name, int go) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_NAME, name);
  char byte = 0;
  if (read(go, &byte, 1) != 1) _exit(1);
  while (true) {
    Spin(absl::Milliseconds(3));
    absl::SleepFor(absl::Milliseconds(1));
  }
}

// Two processes in one cgroup and a third in another, created here for
// the test: the capture carries their paths, and --group-by cgroup puts
// the first two in one group and the third in another (docs/LIVE.md,
// "Cgroup paths").
TEST_F(RecordLiveTest, CaptureCarriesCgroupsThatGroupByCgroupGroups) {
  const CgroupMount mount = FindCgroupMount();
  if (mount.path.empty()) GTEST_SKIP() << mount.why;
  const std::string name_a = absl::StrCat("schedcache-live-", getpid(), "-a");
  const std::string name_b = absl::StrCat("schedcache-live-", getpid(), "-b");
  const std::string dir_a = mount.path + "/" + name_a;
  const std::string dir_b = mount.path + "/" + name_b;
  std::error_code error;
  if (!std::filesystem::create_directory(dir_a, error) ||
      !std::filesystem::create_directory(dir_b, error)) {
    std::filesystem::remove(dir_a);
    GTEST_SKIP() << "cannot create a cgroup under " << mount.path << ": "
                 << error.message();
  }
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t a1 = StartCgroupSpinner("sc-cg-a1", go[0]);
  const pid_t a2 = StartCgroupSpinner("sc-cg-a2", go[0]);
  const pid_t b1 = StartCgroupSpinner("sc-cg-b1", go[0]);
  close(go[0]);
  for (const auto& [pid, dir] : {std::pair{a1, dir_a}, std::pair{a2, dir_a},
                                 std::pair{b1, dir_b}}) {
    std::ofstream(dir + "/cgroup.procs") << pid << std::flush;
  }
  ASSERT_EQ(write(go[1], "xxx", 3), 3);
  close(go[1]);
  const std::string trace = dir_.path() + "/cgroups.trace";
  const CommandResult record =
      RunCommand({kBin + "schedcache", "record", "--duration", "2",
                  "--output", trace, "--format", "json"});
  for (const pid_t pid : {a1, a2, b1}) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  // Empty now: the kernel removes them.
  EXPECT_TRUE(std::filesystem::remove(dir_a));
  EXPECT_TRUE(std::filesystem::remove(dir_b));
  ASSERT_EQ(record.exit_code, 0) << record.err;
  EXPECT_THAT(record.out, ::testing::ContainsRegex("\"cgroupPaths\": [1-9]"));

  // The paths the capture gives the spinners, and the groups of their
  // samples under --group-by cgroup.
  std::map<int32_t, std::string> paths;
  std::map<int32_t, std::set<uint64_t>> groups;
  struct Groups : EventSink {
    std::map<int32_t, std::set<uint64_t>>& groups;
    explicit Groups(std::map<int32_t, std::set<uint64_t>>& g) : groups(g) {}
    absl::Status OnSample(const Sample& s) override {
      groups[s.tgid].insert(s.cache_group);
      return absl::OkStatus();
    }
    absl::Status OnHandOver(const HandOver&) override {
      return absl::OkStatus();
    }
    absl::Status OnProcessExit(const ProcessExit&) override {
      return absl::OkStatus();
    }
    absl::Status OnProcessStart(const ProcessStart&) override {
      return absl::OkStatus();  // the machine's other processes exec too
    }
  } seen(groups);
  ab::CacheGroupingSink grouping(*ab::ParseGroupBy("cgroup"), seen);
  TraceOptions options;
  options.on_cgroup = [&](int32_t tgid, std::string_view path) {
    paths[tgid] = std::string(path);
    grouping.OnCgroup(tgid, absl::string_view(path.data(), path.size()));
  };
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(trace, options, grouping);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(paths[a1], "/" + name_a);
  EXPECT_EQ(paths[a2], "/" + name_a);
  EXPECT_EQ(paths[b1], "/" + name_b);
  ASSERT_EQ(groups[a1].size(), 1u);
  ASSERT_EQ(groups[b1].size(), 1u);
  EXPECT_NE(*groups[a1].begin(), kOwnCacheGroup);
  EXPECT_EQ(groups[a2], groups[a1]);
  EXPECT_NE(*groups[b1].begin(), *groups[a1].begin());
  EXPECT_NE(*groups[b1].begin(), kOwnCacheGroup);

  // And through the CLI.
  const CommandResult ab =
      RunCommand({kBin + "schedcache", "ab", "--input", "trace:" + trace,
                  "--group-by", "cgroup", "--policies", "full-scan"});
  ASSERT_EQ(ab.exit_code, 0) << ab.err;
  EXPECT_THAT(ab.out, HasSubstr("group-by=cgroup"));
}

}  // namespace
}  // namespace schedcache
