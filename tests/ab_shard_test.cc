// `schedcache ab --inputs-file LIST --shard K/N` on 4 shards, then
// `schedcache ab-merge`, gives the report of one unsharded run over the same
// list (docs/OPERATIONS.md), run in-process through RunCli.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli.h"
#include "cli/testing/cli_capture.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/subprocess.h"

namespace schedcache::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kTopology[] = "synthetic:pack:1 l3:2 core:4 pu:1";  // 8 CPUs

std::string Dir() { return ::testing::TempDir() + "/ab-shard"; }

// WriteTrace writes an ftrace text trace (with the tgid column) of two
// processes of three threads on CPUs 0-5 for 300 ms: each thread runs on
// its CPU for 2-12 ms slices with 0-3 ms idle gaps. `seed` permutes the
// threads over the CPUs and draws the slices, so each input differs.
void WriteTrace(const std::string& path, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<int> tids = {1001, 1002, 1003, 2001, 2002, 2003};
  std::shuffle(tids.begin(), tids.end(), random);
  struct Line {
    int64_t us;
    std::string text;
  };
  std::vector<Line> lines;
  auto line = [&lines](int cpu, int64_t us, int cur, int next) {
    const std::string comm = cur == 0 ? "<idle>" : absl::StrCat("w", cur);
    const std::string tgid =
        cur == 0 ? "-------" : absl::StrFormat("%7d", cur / 1000 * 1000 + 1);
    const std::string prev = cur == 0 ? "swapper" : absl::StrCat("w", cur);
    const std::string next_comm =
        next == 0 ? "swapper" : absl::StrCat("w", next);
    lines.push_back(
        {us, absl::StrFormat(
                 "%16s-%-5d (%s) [%03d] d..2. %6d.%06d: sched_switch: "
                 "prev_comm=%s prev_pid=%d prev_prio=120 prev_state=S ==> "
                 "next_comm=%s next_pid=%d next_prio=120",
                 comm, cur, tgid, cpu, us / 1'000'000, us % 1'000'000, prev,
                 cur, next_comm, next)});
  };
  for (int cpu = 0; cpu < static_cast<int>(tids.size()); ++cpu) {
    int64_t us = 100'000'000 + cpu;  // 100 s, distinct per CPU
    const int64_t end = us + 300'000;
    while (us < end) {
      line(cpu, us, 0, tids[cpu]);
      us += 2'000 + random() % 10'000;
      line(cpu, us, tids[cpu], 0);
      us += random() % 3'000 + 1;
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.us < b.us; });
  std::ofstream out(path);
  for (const Line& l : lines) out << l.text << "\n";
}

// WithoutScanTimes drops every "scanNs" object and the cost fields made of
// it (scanNsTotal, scanTimeShare, scanTimeVsReference): the only values
// that depend on the machine's speed (the wall time of each scan),
// measured anew by each run. Everything else is computed from the inputs
// alone.
std::string WithoutScanTimes(const std::string& json) {
  static const std::regex kScanNs("\"scanNs\":\\{[^}]*\\},?");
  static const std::regex kScanCost(
      "\"(scanNsTotal|scanTimeShare|scanTimeVsReference)\":[^,}]*,?");
  return std::regex_replace(std::regex_replace(json, kScanNs, ""), kScanCost,
                            "");
}

class AbShard : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(Dir());
    for (uint32_t i = 0; i < 4; ++i) {
      WriteTrace(absl::StrCat(Dir(), "/in", i, ".trace"), i + 1);
    }
    list_ = Dir() + "/inputs.txt";
    // 7 entries, one bad: round-robin over 4 shards gives shard 0 entries
    // 0 and 4 (in0, in2), shard 1 entries 1 and 5 (redis, hackbench),
    // shard 2 entries 2 and 6 (in1, in3), shard 3 entry 3 (the bad one, so
    // no result at all).
    std::ofstream(list_) << "# shard test\n"
                            "trace:in0.trace\n"
                            "workload:redis\n"
                            "trace:in1.trace\n"
                            "not-an-input\n"
                            "trace:in2.trace   # relative to the list\n"
                            "workload:hackbench\n"
                            "trace:in3.trace\n";
  }

  std::vector<std::string> Ab(std::vector<std::string> extra) {
    std::vector<std::string> args = {"ab",
                                     "--inputs-file",
                                     list_,
                                     "--topology",
                                     kTopology,
                                     "--policies",
                                     "full-scan,visited-scan",
                                     "--duration-ms",
                                     "50"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::string list_;
};

TEST_F(AbShard, FourShardsMergedEqualOneUnshardedRun) {
  const std::string whole = Dir() + "/whole.json";
  CliResult r = InvokeCli(Ab({"--json", whole}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr(list_ + ":5: \"not-an-input\""));
  EXPECT_THAT(r.out, HasSubstr("6 inputs: trace:"));

  std::vector<std::string> merge = {"ab-merge"};
  for (int k = 0; k < 4; ++k) {
    const std::string shard = absl::StrCat(Dir(), "/shard", k, ".json");
    r = InvokeCli(Ab({"--shard", absl::StrCat(k, "/4"), "--json", shard}));
    ASSERT_EQ(r.code, kExitOk) << "shard " << k << ": " << r.err;
    merge.push_back(shard);
  }
  EXPECT_THAT(r.err, HasSubstr("shard 3/4 has none of the list's 7 entries"));
  // Any order of the files: the merge orders results by list position.
  std::swap(merge[1], merge[4]);
  const std::string merged = Dir() + "/merged.json";
  merge.insert(merge.end(), {"--json", merged, "--html", Dir() + "/m.html"});
  r = InvokeCli(merge);
  ASSERT_EQ(r.code, kExitOk) << r.err;

  const std::string want = test_support::ReadFile(whole);
  ASSERT_THAT(want, HasSubstr("\"scans\":"));
  EXPECT_NE(WithoutScanTimes(want), want);  // the filter did remove something
  EXPECT_EQ(WithoutScanTimes(test_support::ReadFile(merged)),
            WithoutScanTimes(want));
  EXPECT_THAT(test_support::ReadFile(Dir() + "/m.html"),
              HasSubstr("id=\"cpus-scanned\""));
}

TEST_F(AbShard, MergeRefusesShardsOfAnotherConfigNamingFileAndField) {
  const std::string a = Dir() + "/cfg-a.json", b = Dir() + "/cfg-b.json";
  ASSERT_EQ(InvokeCli(Ab({"--shard", "0/2", "--json", a})).code, kExitOk);
  ASSERT_EQ(InvokeCli(Ab({"--shard", "1/2", "--json", b, "--set",
                          "aggr_tolerance=50"}))
                .code,
            kExitOk);
  CliResult r = InvokeCli({"ab-merge", a, b});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err,
              HasSubstr(b + ": config.settings is \"aggr_tolerance=50\""));
}

TEST_F(AbShard, MergeRefusesAMissingOrRepeatedShard) {
  const std::string a = Dir() + "/miss-0.json";
  ASSERT_EQ(InvokeCli(Ab({"--shard", "0/3", "--json", a})).code, kExitOk);
  CliResult r = InvokeCli({"ab-merge", a});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("shard 1/3 is missing: got 1 of 3 shard files"));
  r = InvokeCli({"ab-merge", a, a});
  EXPECT_THAT(r.err, HasSubstr("are both shard 0/3"));
}

TEST_F(AbShard, MergeRefusesShardsOfAnotherList) {
  const std::string other = Dir() + "/other.txt";
  std::ofstream(other) << "workload:redis\ntrace:in0.trace\n";
  const std::string a = Dir() + "/list-a.json", b = Dir() + "/list-b.json";
  ASSERT_EQ(InvokeCli(Ab({"--shard", "0/2", "--json", a})).code, kExitOk);
  std::vector<std::string> args = Ab({"--shard", "1/2", "--json", b});
  args[2] = other;  // --inputs-file's value
  ASSERT_EQ(InvokeCli(args).code, kExitOk);
  CliResult r = InvokeCli({"ab-merge", a, b});
  EXPECT_EQ(r.code, kExitError);
  // The first difference the two lists show: 7 entries against 2.
  EXPECT_THAT(r.err, HasSubstr(b + ": entries is \"2\" but " + a +
                               " has \"7\": not shards of one run"));
}

TEST_F(AbShard, AnInputThatFailsStopsTheRunNamingItsListLine) {
  const std::string list = Dir() + "/missing.txt";
  std::ofstream(list) << "workload:redis\n# gone\ntrace:gone.trace\n";
  std::vector<std::string> args = Ab({});
  args[2] = list;
  CliResult r = InvokeCli(args);
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr(list + ":3: trace:gone.trace: "));
}

TEST_F(AbShard, UsageErrorsNameTheFlag) {
  EXPECT_THAT(InvokeCli(Ab({"--shard", "0/2"})).err,
              HasSubstr("--shard needs --json FILE"));
  EXPECT_THAT(InvokeCli(Ab({"--shard", "2/2", "--json", "x"})).err,
              HasSubstr("--shard 2/2: K must be in 0..1"));
  CliResult r =
      InvokeCli({"ab", "--input", "workload:redis", "--shard", "0/2"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--shard splits an --inputs-file list"));
  EXPECT_EQ(InvokeCli({"ab-merge"}).code, kExitUsage);
}

}  // namespace
}  // namespace schedcache::cli
