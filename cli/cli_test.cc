#include "cli/cli.h"

#include "cli/testing/cli_capture.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(RunCli, HelpListsEveryVerb) {
  CliResult r = InvokeCli({"help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const VerbEntry& entry : Verbs()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(entry.name)));
  }
}

TEST(RunCli, NoArgumentsIsUsageError) {
  EXPECT_EQ(InvokeCli({}).code, kExitUsage);
}

TEST(RunCli, UnknownVerbIsUsageError) {
  CliResult r = InvokeCli({"frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("frobnicate"));
}

TEST(RunCli, VerbHelpShowsItsFlags) {
  CliResult r = InvokeCli({"topology", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, StartsWith("usage: schedcache topology [flags]"));
  EXPECT_THAT(r.out, HasSubstr("--source SOURCE"));
  EXPECT_THAT(r.out, HasSubstr("--format table|json"));
  // `help VERB` says the same.
  EXPECT_EQ(InvokeCli({"help", "topology"}).out, r.out);
}

TEST(RunCli, UnknownFlagAndStrayArgumentAreUsageErrors) {
  EXPECT_EQ(InvokeCli({"topology", "--bogus"}).code, kExitUsage);
  EXPECT_EQ(InvokeCli({"topology", "--format", "yaml"}).code, kExitUsage);
  EXPECT_EQ(InvokeCli({"topology", "stray"}).code, kExitUsage);
  EXPECT_EQ(InvokeCli({"topology", "--source"}).code, kExitUsage);
}

TEST(RunCli, TopologyTableOfSyntheticMachine) {
  // 1 package, 2 L3s of 2 cores x 2 threads: LLC 0 = CPUs 0-3, LLC 1 = 4-7.
  CliResult r =
      InvokeCli({"topology", "--source", "synthetic:pack:1 l3:2 core:2 pu:2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8 CPUs (SMT 2), 2 L3 LLCs"));
  EXPECT_THAT(r.out, HasSubstr(" 0-3\n"));
  EXPECT_THAT(r.out, HasSubstr(" 4-7\n"));
}

TEST(RunCli, TopologyBadSourceIsError) {
  CliResult r = InvokeCli({"topology", "--source", "xml:/nonexistent.xml"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.xml"));
}

}  // namespace
}  // namespace schedcache::cli
