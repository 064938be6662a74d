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

}  // namespace
}  // namespace schedcache
