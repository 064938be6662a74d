#include "client/cli/cli.h"

#include <sstream>

#include "client/cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result Invoke(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(RunCli, HelpListsEveryVerb) {
  Result r = Invoke({"help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const VerbEntry& entry : Verbs()) {
    EXPECT_THAT(r.out, HasSubstr(std::string(entry.name)));
  }
}

TEST(RunCli, NoArgumentsIsUsageError) {
  EXPECT_EQ(Invoke({}).code, kExitUsage);
}

TEST(RunCli, UnknownVerbIsUsageError) {
  Result r = Invoke({"frobnicate"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("frobnicate"));
}

TEST(RunCli, VerbHelpShowsItsFlags) {
  Result r = Invoke({"topology", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, StartsWith("usage: schedcache topology [flags]"));
  EXPECT_THAT(r.out, HasSubstr("--source SOURCE"));
  EXPECT_THAT(r.out, HasSubstr("--format table|json"));
  // `help VERB` says the same.
  EXPECT_EQ(Invoke({"help", "topology"}).out, r.out);
}

TEST(RunCli, UnknownFlagAndStrayArgumentAreUsageErrors) {
  EXPECT_EQ(Invoke({"topology", "--bogus"}).code, kExitUsage);
  EXPECT_EQ(Invoke({"topology", "--format", "yaml"}).code, kExitUsage);
  EXPECT_EQ(Invoke({"topology", "stray"}).code, kExitUsage);
  EXPECT_EQ(Invoke({"topology", "--source"}).code, kExitUsage);
}

TEST(RunCli, TopologyTableOfSyntheticMachine) {
  // 1 package, 2 L3s of 2 cores x 2 threads: LLC 0 = CPUs 0-3, LLC 1 = 4-7.
  Result r = Invoke({"topology", "--source", "synthetic:pack:1 l3:2 core:2 pu:2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8 CPUs (SMT 2), 2 L3 LLCs"));
  EXPECT_THAT(r.out, HasSubstr(" 0-3\n"));
  EXPECT_THAT(r.out, HasSubstr(" 4-7\n"));
}

TEST(RunCli, TopologyBadSourceIsError) {
  Result r = Invoke({"topology", "--source", "xml:/nonexistent.xml"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.xml"));
}

}  // namespace
}  // namespace schedcache::cli
