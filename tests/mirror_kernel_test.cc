// `schedcache mirror` on the real kernel: a schedcached process, the
// mirror as a process writing pinned maps on a private bpffs, and a BPF
// program (bpfmaps/testing/pref_probe.bpf.c, through the layout header's
// helper, run with BPF_PROG_TEST_RUN) that must answer what `recommend`
// says. Skipped, saying what is missing, without root, a bpffs or bpf();
// the refusal of a directory that is not on a bpffs runs everywhere.
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "bpfmaps/testing/pref_probe_runner.h"
#include "bpfmaps/testing/private_bpffs_suite.h"
#include "schedcache/client.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kBin = std::string(SCHEDCACHE_BINARY_DIR) + "/bin/";
constexpr char kSession[] = "mirror";
constexpr char kPolicy[] = "visited-scan";
constexpr int64_t kMs = 1'000'000;

// Tick is a scheduler tick of thread `tgid` of process `tgid` on `cpu` at
// `t`, accounting `delta_ns` of runtime.
Sample Tick(int64_t t, int32_t cpu, int32_t tgid, int64_t delta_ns) {
  Sample sample;
  sample.timestamp_ns = t;
  sample.cpu = cpu;
  sample.tgid = tgid;
  sample.tid = tgid;
  sample.delta_ns = delta_ns;
  sample.tick = true;
  return sample;
}

// PreferLlcEvents makes process `tgid` (2 threads) prefer the LLC of
// `cpu` on kTwoLlcTopology (LLC 0 = CPUs 0-1, LLC 1 = CPUs 2-3): as in
// PreferLlc0Events, a first tick at t0 and a second 20 ms later, at
// least two epochs on, which scans and finds runtime only in `cpu`'s LLC. t0 must
// not be behind the session's clock: a tick behind it runs at the clock,
// and the second would then find no new epoch and not scan.
std::vector<Sample> PreferLlcEvents(int32_t tgid, int32_t cpu, int64_t t0) {
  Sample first = Tick(t0, cpu, tgid, kMs);
  first.nr_threads = 2;
  return {first, Tick(t0 + 20 * kMs, cpu, tgid, kMs)};
}

constexpr char kSuiteName[] = "mirror_kernel_test";

// The suite mounts its bpffs before any thread exists; schedcached and the
// mirror, forked later, inherit the namespace.
class MirrorKernelTest : public PrivateBpffsSuite<kSuiteName> {
 protected:
  void SetUp() override {
    socket_ = dir_.path() + "/schedcached.sock";
    StartServer();
  }

  void StartServer() {
    server_ = Process::Start(
        {kBin + "schedcached", "--listen=unix:" + socket_},
        dir_.path() + "/server.log");
    ASSERT_NE(server_, nullptr);
    client::Options options;
    options.address = "unix:" + socket_;
    client_ = client::Client::Connect(options);
    ASSERT_TRUE(client_->WaitForReady().ok());
    ASSERT_TRUE(client_->CreateSession(TwoLlcSessionRequest(kSession)).ok());
  }

  std::string PinDir() const { return Root() + "/" + kSession; }

  std::vector<std::string> MirrorArgs(const std::string& pin_dir) const {
    return {kBin + "schedcache", "mirror",  "--server", "unix:" + socket_,
            "--session",         kSession,  "--policy", kPolicy,
            "--pin-dir",         pin_dir,   "--verbose"};
  }

  // StartMirror starts the mirror and reads its output up to the line that
  // says it follows the stream, so every later change reaches it.
  std::unique_ptr<Process> StartMirror() {
    std::unique_ptr<Process> mirror =
        Process::Start(MirrorArgs(PinDir()), dir_.path() + "/mirror.log");
    if (mirror == nullptr) return mirror;
    EXPECT_TRUE(ReadUpTo(*mirror, "following changes"));
    return mirror;
  }

  // ReadUpTo reads the mirror's lines until one contains `text`; false at
  // the end of its output.
  static bool ReadUpTo(Process& mirror, absl::string_view text) {
    while (std::optional<std::string> line = mirror.ReadLine()) {
      if (absl::StrContains(*line, text)) return true;
    }
    ADD_FAILURE() << "the mirror ended without printing \"" << text << "\"";
    return false;
  }

  void Ingest(const std::vector<Sample>& samples) {
    std::unique_ptr<client::IngestWriter> writer =
        client_->StartIngest(kSession);
    for (const Sample& sample : samples) ASSERT_TRUE(writer->Add(sample).ok());
    const absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->rejected(), 0u);
  }

  void IngestExit(int64_t timestamp_ns, int32_t tgid) {
    std::unique_ptr<client::IngestWriter> writer =
        client_->StartIngest(kSession);
    ASSERT_TRUE(writer->Add(ProcessExit{timestamp_ns, tgid}).ok());
    const absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->rejected(), 0u);
  }

  // Recommended is the mirrored policy's preferred LLC for `tgid`.
  int32_t Recommended(int32_t tgid) {
    v1::RecommendRequest request;
    request.set_session(kSession);
    request.set_tgid(tgid);
    absl::StatusOr<v1::RecommendResponse> answer = client_->Recommend(request);
    EXPECT_TRUE(answer.ok()) << answer.status();
    for (const v1::PolicyDecision& decision : answer->decisions()) {
      if (decision.policy() == kPolicy) return decision.preferred_llc();
    }
    ADD_FAILURE() << "no decision of " << kPolicy;
    return -2;
  }

  // Probe asks the BPF program about `tgid`.
  pref_probe_ctx Probe(uint32_t tgid) {
    absl::StatusOr<PrefProbeRunner> probe =
        PrefProbeRunner::Load(SCHEDCACHE_PREF_PROBE_OBJECT, PinDir());
    EXPECT_TRUE(probe.ok()) << probe.status();
    if (!probe.ok()) return {};
    absl::StatusOr<pref_probe_ctx> ctx = probe->Run(tgid);
    EXPECT_TRUE(ctx.ok()) << ctx.status();
    return ctx.ok() ? *ctx : pref_probe_ctx{};
  }

  TempDir dir_;
  std::string socket_;
  std::unique_ptr<Process> server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(MirrorKernelTest, BpfProgramReadsWhatRecommendSays) {
  SkipWithoutBpffs();
  if (IsSkipped()) return;
  std::unique_ptr<Process> mirror = StartMirror();
  ASSERT_NE(mirror, nullptr);
  Ingest(PreferLlcEvents(4242, /*cpu=*/0, 0));
  ASSERT_TRUE(ReadUpTo(*mirror, "tgid 4242 llc 0"));
  Ingest(PreferLlcEvents(5353, /*cpu=*/2, 100 * kMs));
  ASSERT_TRUE(ReadUpTo(*mirror, "tgid 5353 llc 1"));

  // LLC 0 is CPUs 0-1 and LLC 1 CPUs 2-3; each process ran on one CPU
  // only, the preferred CPU the stream carries.
  ASSERT_EQ(Recommended(4242), 0);
  const pref_probe_ctx first = Probe(4242);
  EXPECT_EQ(first.llc, 0);
  EXPECT_EQ(first.cpu, 0);
  EXPECT_EQ(first.in_mask, 1u);
  ASSERT_EQ(Recommended(5353), 1);
  const pref_probe_ctx second = Probe(5353);
  EXPECT_EQ(second.llc, 1);
  EXPECT_EQ(second.cpu, 2);
  EXPECT_EQ(second.in_mask, 1u);
  // A process the server does not track (Recommend: NOT_FOUND) has no
  // entry.
  EXPECT_EQ(Probe(6464).llc, -1);

  // A change: 4242 runs 50 ms on CPU 2 at 200 ms. In jiffies (HZ 250,
  // epochs of 2 jiffies from jiffy 0): 4242 scanned at 20 ms (jiffy 5,
  // epoch ceil(5 / 2) = 3); 5353 took CPU 2 to epoch 13 at 100 ms (jiffy
  // 25, cpu_epoch_next 26) and 15 at 120 ms (jiffy 30). At 200 ms (jiffy
  // 50) CPU 2 decays ceil((50 - 30) / 2) = 10 epochs to epoch 25, and
  // 25 - mm.epoch 3 > 5 (affinity_timeout_epochs) times the old preference
  // out; the tick then scans (mm.epoch 3 < 25): visited-scan drops CPU 0
  // (visited at epoch 3; CPU 0 is at epoch 25 by then), so LLC 1 (CPU 2,
  // 50 ms of its ~50 ms: occupancy ~NICE_0_LOAD) beats LLC 0 (0).
  Ingest({Tick(200 * kMs, /*cpu=*/2, 4242, 50 * kMs)});
  ASSERT_TRUE(ReadUpTo(*mirror, "tgid 4242 llc 1"));
  ASSERT_EQ(Recommended(4242), 1);
  const pref_probe_ctx moved = Probe(4242);
  EXPECT_EQ(moved.llc, 1);
  EXPECT_EQ(moved.cpu, 2);
  EXPECT_EQ(Probe(5353).llc, 1);

  // 4242 exits: the change to none (reason exited) deletes its entry.
  IngestExit(300 * kMs, 4242);
  ASSERT_TRUE(ReadUpTo(*mirror, "tgid 4242 llc -"));
  EXPECT_EQ(Probe(4242).llc, -1);
  EXPECT_EQ(Probe(5353).llc, 1);

  mirror->Signal(SIGTERM);
  EXPECT_TRUE(ReadUpTo(*mirror, "stopped: changes applied "));
  EXPECT_EQ(mirror->WaitForExit(absl::Seconds(30)), 0);
}

TEST_F(MirrorKernelTest, RestartedMirrorReusesTheMapsAndTheirEntries) {
  SkipWithoutBpffs();
  if (IsSkipped()) return;
  {
    std::unique_ptr<Process> mirror = StartMirror();
    ASSERT_NE(mirror, nullptr);
    Ingest(PreferLlcEvents(4242, /*cpu=*/2, 0));
    ASSERT_TRUE(ReadUpTo(*mirror, "tgid 4242 llc 1"));
    mirror->Signal(SIGINT);
    EXPECT_EQ(mirror->WaitForExit(absl::Seconds(30)), 0);
  }
  // While no mirror runs, 5353 comes to prefer LLC 0: the restarted
  // mirror's snapshot brings it, and 4242's hint survives the restart.
  Ingest(PreferLlcEvents(5353, /*cpu=*/0, 100 * kMs));
  std::unique_ptr<Process> mirror =
      Process::Start(MirrorArgs(PinDir()), dir_.path() + "/mirror2.log");
  ASSERT_NE(mirror, nullptr);
  const std::optional<std::string> banner = mirror->ReadLine();
  ASSERT_TRUE(banner.has_value());
  EXPECT_THAT(*banner, HasSubstr("(reused maps)"));
  EXPECT_EQ(Probe(4242).llc, 1);
  ASSERT_TRUE(ReadUpTo(*mirror, "following changes"));
  EXPECT_EQ(Probe(4242).llc, 1);
  EXPECT_EQ(Probe(5353).llc, 0);
  mirror->Signal(SIGTERM);
  EXPECT_EQ(mirror->WaitForExit(absl::Seconds(30)), 0);
}

TEST_F(MirrorKernelTest, MapModeSetsThePinnedFilesMode) {
  SkipWithoutBpffs();
  if (IsSkipped()) return;
  // A directory of its own: maps reused from another test keep their mode.
  const std::string pin_dir = Root() + "/mode";
  std::vector<std::string> args = MirrorArgs(pin_dir);
  args.insert(args.end(), {"--map-mode", "0640", "--once"});
  const CommandResult once = RunCommand(args);
  ASSERT_EQ(once.exit_code, 0) << once.err;
  EXPECT_THAT(once.out, StartsWith("mirroring session mirror policy "
                                   "visited-scan into " +
                                   pin_dir + " (new maps)"));
  for (const char* name : {"prefs", "llcs", "meta"}) {
    struct stat st {};
    ASSERT_EQ(stat((pin_dir + "/" + name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 07777, 0640u) << name;
  }
}

TEST_F(MirrorKernelTest, RefusesADirectoryNotOnABpffs) {
  // Runs everywhere: the check comes before any bpf() call.
  const CommandResult result = RunCommand(MirrorArgs(dir_.path() + "/pins"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err,
              HasSubstr("schedcache mirror: FAILED_PRECONDITION: pin "
                        "directory " +
                        dir_.path() + "/pins does not exist, and " +
                        dir_.path() + " is not on a bpffs (filesystem magic"));
  EXPECT_THAT(result.err, HasSubstr("mount -t bpf bpf " + dir_.path()));
}

TEST_F(MirrorKernelTest, RefusesAPolicyTheSessionDoesNotHave) {
  std::vector<std::string> args = MirrorArgs(dir_.path());
  args[7] = "no-such-policy";  // the value of --policy
  const CommandResult result = RunCommand(args);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err,
              HasSubstr("--policy no-such-policy is not a policy of session "
                        "mirror (full-scan, visited-scan, none)"));
}

}  // namespace
}  // namespace schedcache::test_support
