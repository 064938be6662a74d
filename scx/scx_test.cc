// schedcache-scx without a kernel: the summary's arithmetic, the CPU -> LLC
// table, and the refusals that come before any bpf() call, with the
// sched_ext directory and the euid pointed at fakes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scx/schedcache_scx.h"
#include "scx/scx_cli.h"
#include "scx/scx_loader.h"
#include "scx/scx_summary.h"

namespace schedcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ScxSummary, CountersFromArrayNamesEachIndex) {
  std::vector<uint64_t> values(SCHEDCACHE_SCX_NR_COUNTERS);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 10 + i;
  const ScxCounters c = CountersFromArray(values);
  EXPECT_EQ(c.placed_preferred, 10u);
  EXPECT_EQ(c.queued_preferred_busy, 11u);
  EXPECT_EQ(c.no_preference, 12u);
  EXPECT_EQ(c.pinned, 13u);
  EXPECT_EQ(c.steals, 14u);
  EXPECT_EQ(c.latency_lost, 15u);
  EXPECT_EQ(c.narrow_affinity, 16u);
  EXPECT_EQ(c.over_aggregated, 17u);
}

TEST(ScxSummary, LatencyPercentilesByNearestRank) {
  LatencyLog log;
  // Delays 1..100 ns, one per tgid: p50 is rank ceil(0.5 * 100) = 50, the
  // value 50; p99 rank 99, the value 99.
  for (uint32_t i = 1; i <= 100; ++i) {
    log.Add({.tgid = i, .llc = 0, .seq = 1, .updated_ns = 1000,
             .placed_ns = 1000 + i});
  }
  const LatencySummary summary = log.Summarize();
  EXPECT_EQ(summary.count, 100u);
  EXPECT_EQ(summary.p50, 50u);
  EXPECT_EQ(summary.p99, 99u);
}

TEST(ScxSummary, LatencyKeepsTheEarliestPlacementPerTgidAndSeq) {
  LatencyLog log;
  log.Add({.tgid = 7, .llc = 1, .seq = 3, .updated_ns = 100, .placed_ns = 500});
  log.Add({.tgid = 7, .llc = 1, .seq = 3, .updated_ns = 100, .placed_ns = 300});
  // Stamped before the write (the entry changed under the reader): 0.
  log.Add({.tgid = 7, .llc = 0, .seq = 4, .updated_ns = 900, .placed_ns = 800});
  const LatencySummary summary = log.Summarize();
  // Two (tgid, seq) pairs, delays {0, 200}: p50 rank ceil(1) = 1 -> 0,
  // p99 rank ceil(1.98) = 2 -> 200.
  EXPECT_EQ(summary.count, 2u);
  EXPECT_EQ(summary.p50, 0u);
  EXPECT_EQ(summary.p99, 200u);
}

TEST(ScxSummary, EmptyLogSummarizesToZeros) {
  const LatencySummary summary = LatencyLog().Summarize();
  EXPECT_EQ(summary.count, 0u);
  EXPECT_EQ(summary.p50, 0u);
  EXPECT_EQ(summary.p99, 0u);
}

TEST(ScxSummary, SummaryJsonHasEveryField) {
  const ScxCounters c{.placed_preferred = 1, .queued_preferred_busy = 2,
                      .no_preference = 3, .pinned = 4,
                      .narrow_affinity = 10, .over_aggregated = 11,
                      .steals = 5, .latency_lost = 6};
  EXPECT_EQ(SummaryJson(c, {.count = 7, .p50 = 8, .p99 = 9}),
            "{\"placed_preferred\":1,\"fallbacks\":{\"preferred_llc_busy\":2,"
            "\"no_preference\":3,\"pinned\":4,\"narrow_affinity\":10,"
            "\"over_aggregated\":11},"
            "\"steals\":5,"
            "\"pref_latency_ns\":{\"count\":7,\"p50\":8,\"p99\":9,\"lost\":6}}");
}

TEST(ScxCpuList, ParsesRangesAndSingles) {
  const absl::StatusOr<std::vector<uint32_t>> cpus = ParseCpuList("0-3,6\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 3, 6));
}

TEST(ScxCpuList, RefusesWhatIsNotAList) {
  for (const char* text : {"3-1", "a", "1-", "", "0,,1"}) {
    const absl::StatusOr<std::vector<uint32_t>> cpus = ParseCpuList(text);
    EXPECT_EQ(cpus.status().code(), absl::StatusCode::kInvalidArgument)
        << text;
  }
}

// Llc is an llcs entry of `cpus`.
schedcache_llc Llc(const std::vector<uint32_t>& cpus) {
  schedcache_llc llc{};
  llc.first_cpu = cpus.front();
  llc.nr_cpus = static_cast<uint32_t>(cpus.size());
  for (const uint32_t cpu : cpus) llc.cpus[cpu / 64] |= uint64_t{1} << (cpu % 64);
  return llc;
}

TEST(ScxCpuLlcTable, MapsEachCpuToItsLlc) {
  const uint32_t online[] = {0, 1, 2, 3};
  // CPU 4 possible but offline and in no LLC: 0.
  const absl::StatusOr<std::vector<int32_t>> table =
      BuildCpuLlcTable({Llc({0, 2}), Llc({1, 3})}, 5, online);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_THAT(*table, ElementsAre(0, 1, 0, 1, 0));
}

TEST(ScxCpuLlcTable, RefusesAnOnlineCpuInNoLlc) {
  const uint32_t online[] = {0, 1, 2};
  const absl::StatusOr<std::vector<int32_t>> table =
      BuildCpuLlcTable({Llc({0, 1})}, 3, online);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(table.status().message(), HasSubstr("online CPU 2 is in no LLC"));
}

TEST(ScxCpuLlcTable, RefusesAnLlcCpuBeyondTheMachine) {
  const uint32_t online[] = {0};
  const absl::StatusOr<std::vector<int32_t>> table =
      BuildCpuLlcTable({Llc({0, 9})}, 4, online);
  EXPECT_THAT(table.status().message(),
              HasSubstr("llcs entry 0 names CPU 9, this machine has 4"));
}

TEST(ScxCpuLlcTable, RefusesMoreCpusThanTheTable) {
  const absl::StatusOr<std::vector<int32_t>> table =
      BuildCpuLlcTable({}, SCHEDCACHE_SCX_MAX_CPUS + 1, {});
  EXPECT_THAT(table.status().message(), HasSubstr("at most 512"));
}

// FakeSchedExt is a /sys/kernel/sched_ext of a test's own.
class FakeSchedExt {
 public:
  FakeSchedExt() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("scx_test_" + std::to_string(getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
  }
  ~FakeSchedExt() { std::filesystem::remove_all(dir_); }
  // With(state, ops): the directory exists with that state (and root/ops
  // when `ops` is not empty).
  const std::string& With(const std::string& state, const std::string& ops) {
    std::filesystem::create_directories(dir_ + "/root");
    std::ofstream(dir_ + "/state") << state << "\n";
    if (!ops.empty()) std::ofstream(dir_ + "/root/ops") << ops << "\n";
    return dir_;
  }
  const std::string& missing() const { return dir_; }

 private:
  std::string dir_;
};

TEST(ScxCheckSchedExt, SaysTheKernelHasNoSchedExt) {
  FakeSchedExt fake;
  const absl::Status status = CheckSchedExt(fake.missing());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("this kernel has no sched_ext (CONFIG_SCHED_CLASS_EXT)"));
}

TEST(ScxCheckSchedExt, NamesTheSchedulerAlreadyRunning) {
  FakeSchedExt fake;
  const absl::Status status = CheckSchedExt(fake.With("enabled", "simple"));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("a sched_ext scheduler is already running: \"simple\""));
  EXPECT_THAT(status.message(), HasSubstr("state enabled"));
}

TEST(ScxCheckSchedExt, AcceptsADisabledSchedExt) {
  FakeSchedExt fake;
  EXPECT_TRUE(CheckSchedExt(fake.With("disabled", "")).ok());
}

// CliRun is RunScxCli's exit code and output.
struct CliRun {
  int code;
  std::string out;
  std::string err;
};
CliRun RunCli(const std::vector<std::string>& args, const ScxOptions& base) {
  std::ostringstream out, err;
  const int code = RunScxCli(args, base, out, err);
  return {code, out.str(), err.str()};
}

TEST(ScxCli, HelpListsTheFlags) {
  const CliRun run = RunCli({"--help"}, {});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, HasSubstr("--pin-dir DIR"));
  EXPECT_THAT(run.out, HasSubstr("--stats"));
  EXPECT_THAT(run.out, HasSubstr("--session NAME"));
}

TEST(ScxCli, UnknownFlagIsAUsageError) {
  const CliRun run = RunCli({"--pin-dri", "/x"}, {});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--pin-dri"));
}

TEST(ScxCli, PositionalArgumentIsAUsageError) {
  const CliRun run = RunCli({"extra"}, {});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("unexpected argument extra"));
}

TEST(ScxCli, RefusesAKernelWithoutSchedExt) {
  FakeSchedExt fake;
  const CliRun run = RunCli({}, {.sched_ext_dir = fake.missing()});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("this kernel has no sched_ext"));
  EXPECT_EQ(run.out, "");
}

// This VM's own kernel: the real /sys/kernel/sched_ext.
TEST(ScxCli, RefusesThisKernelWhenItHasNoSchedExt) {
  if (std::filesystem::exists("/sys/kernel/sched_ext")) {
    GTEST_SKIP() << "this kernel has sched_ext";
  }
  const CliRun run = RunCli({}, {});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err,
              HasSubstr("this kernel has no sched_ext (CONFIG_SCHED_CLASS_EXT): "
                        "/sys/kernel/sched_ext is missing"));
}

TEST(ScxCli, RefusesASecondScheduler) {
  FakeSchedExt fake;
  const CliRun run =
      RunCli({}, {.sched_ext_dir = fake.With("enabled", "schedcache")});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("already running: \"schedcache\""));
}

TEST(ScxCli, RefusesANonRootUser) {
  FakeSchedExt fake;
  const CliRun run = RunCli(
      {}, {.sched_ext_dir = fake.With("disabled", ""), .euid = 1000});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("must run as root (effective uid 1000)"));
}

TEST(ScxCli, DefaultPinDirIsMirrorsForTheSession) {
  FakeSchedExt fake;
  // No such session's maps: the error names the default directory.
  const CliRun run = RunCli({"--session", "scx-test-absent"},
                         {.sched_ext_dir = fake.With("disabled", "")});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("/sys/fs/bpf/schedcache/scx-test-absent"));
}

}  // namespace
}  // namespace schedcache
