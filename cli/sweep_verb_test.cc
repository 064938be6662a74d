// `schedcache sweep`, and `schedcache ab` with lists of hackbench groups and
// fds, run in-process through RunCli.
#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/testing/cli_capture.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kHackbench = {
    "--input", "workload:hackbench", "--duration-ms", "100",
    "--policies", "full-scan,visited-scan"};

std::vector<std::string> Args(std::vector<std::string> head,
                              const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST(SweepVerb, PrintsARowPerCombinationAndPolicyAndWritesTheFiles) {
  const std::string dir = ::testing::TempDir();
  CliResult r = InvokeCli(Args(
      {"sweep", "--vary", "affinity_timeout_epochs=1,5", "--vary", "fds=2..3",
       "--jobs", "2", "--json", dir + "/sweep.json", "--csv",
       dir + "/sweep.csv", "--html", dir + "/sweep.html"},
      kHackbench));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("over affinity_timeout_epochs x fds: 4 "
                               "combinations"));
  // 4 combinations x 2 policies, the last key varying fastest; full-scan
  // scans all 384 CPUs of the default topology.
  EXPECT_THAT(r.out, ContainsRegex("\n +1 +2  full-scan +\\| +384\\.0 +384 \\|"));
  EXPECT_THAT(r.out, ContainsRegex("\n +5 +3  visited-scan \\|"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4 + 3 + 8);
  EXPECT_THAT(r.err, Not(HasSubstr("\r")));  // not a terminal: no progress
  EXPECT_THAT(ReadWrittenFile(dir + "/sweep.json"), HasSubstr("\"key\":\"fds\""));
  EXPECT_THAT(ReadWrittenFile(dir + "/sweep.csv"),
              HasSubstr("affinity_timeout_epochs,fds,policy,"));
  const std::string html = ReadWrittenFile(dir + "/sweep.html");
  EXPECT_THAT(html, HasSubstr("id=\"sweep-affinity_timeout_epochs\""));
  EXPECT_THAT(html, HasSubstr("id=\"sweep-fds\""));
}

TEST(SweepVerb, BadVaryIsAUsageErrorNamingKeyAndValue) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const Case cases[] = {
      {{}, "a sweep needs at least one --vary"},
      {{"--vary", "seed"}, "--vary seed: want KEY="},
      {{"--vary", "seed=5..1"}, "--vary seed=5..1: range \"5..1\""},
      {{"--vary", "bogus_knob=1"}, "--vary bogus_knob=1: tunables: \"bogus_knob\""},
      {{"--vary", "affinity_timeout_epochs=2,-1"},
       "--vary affinity_timeout_epochs=-1:"},
      {{"--vary", "groups=1,zero"}, "--vary groups=zero: not an integer"},
      {{"--vary", "seed=1", "--jobs", "0"}, "--jobs 0: must be in 1..1024"},
      {{"--vary", "group-by=tgid,cgroup"},
       "--vary group-by=cgroup: --group-by cgroup needs each process's "
       "cgroup path, and input workload:hackbench"},
  };
  for (const Case& c : cases) {
    CliResult r = InvokeCli(Args(Args({"sweep"}, c.flags), kHackbench));
    EXPECT_EQ(r.code, kExitUsage) << c.message << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("schedcache sweep: " + c.message));
  }
  EXPECT_EQ(InvokeCli({"sweep", "--vary", "seed=1,2"}).code, kExitUsage);
  // Sweeps run in-process: no --server.
  EXPECT_EQ(InvokeCli(Args({"sweep", "--vary", "seed=1", "--server", "unix:/x"},
                        kHackbench))
                .code,
            kExitUsage);
}

TEST(SweepVerb, GroupByTgidAndCommAreTwoCombinations) {
  CliResult r = InvokeCli(
      Args({"sweep", "--vary", "group-by=tgid,comm", "--jobs", "2"},
           kHackbench));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("over group-by: 2 combinations"));
  EXPECT_THAT(r.out, ContainsRegex("\n +tgid  full-scan +\\|"));
  EXPECT_THAT(r.out, ContainsRegex("\n +comm  visited-scan \\|"));
}

TEST(SweepVerb, ARunThatFailsIsAnErrorNamingItsCombination) {
  CliResult r = InvokeCli(Args({"sweep", "--vary",
                          "topology=synthetic:pack:2 l3:2 core:2 pu:1,"
                          "xml:/nonexistent/m.xml"},
                         kHackbench));
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("topology=xml:/nonexistent/m.xml: "));
  // The other combination still counts.
  EXPECT_THAT(r.out, HasSubstr("synthetic:pack:2 l3:2 core:2 pu:1  full-scan"));
}

TEST(AbVerb, GroupsAndFdsListsPrintTheSeedsHackbenchTable) {
  CliResult r = InvokeCli(Args({"ab", "--groups", "1,2", "--fds", "2,4"}, kHackbench));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("MODE +GROUPS +FDS \\| CPUs/scan +p50 +"
                                   "agree\\(%\\) \\| CPUs/scan"));
  // Rows in the order of the lists, groups slowest.
  EXPECT_THAT(r.out, ContainsRegex("\nthreads +1 +2 \\| +384\\.0 +384 .*\n"
                                   "threads +1 +4 \\|.*\nthreads +2 +2 \\|.*\n"
                                   "threads +2 +4 \\|"));
  EXPECT_THAT(r.out, Not(HasSubstr("samples:")));
}

TEST(AbVerb, OneGroupsAndFdsValueKeepsTheAbReport) {
  CliResult r = InvokeCli(Args({"ab", "--groups", "2", "--fds", "2"}, kHackbench));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("input:     workload:hackbench groups=2 fds=2"));
  EXPECT_THAT(r.out, HasSubstr("samples:"));
}

TEST(AbVerb, BadGroupsOrFdsListsNameTheFlagAsTyped) {
  CliResult r = InvokeCli(Args({"ab", "--groups", "1,x"}, kHackbench));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("schedcache ab: --groups 1,x: x is not an "
                               "integer"));
  r = InvokeCli(Args({"ab", "--fds", "2,,4"}, kHackbench));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--fds 2,,4: empty value"));
  r = InvokeCli(Args({"ab", "--fds", "4..2"}, kHackbench));
  EXPECT_THAT(r.err, HasSubstr("--fds 4..2: range \"4..2\""));
}

TEST(AbVerb, GroupsListsNeedTheHackbenchWorkload) {
  CliResult r = InvokeCli({"ab", "--input", "workload:redis", "--groups", "1,2"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--groups 1,2 --fds 10: lists take --input "
                               "workload:hackbench"));
}

}  // namespace
}  // namespace schedcache::cli
