#include "cli/flag_set.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Bound {
  std::string source = "host";
  std::string format = "table";
  int64_t tgid = 0;
  bool scan = false;
  std::vector<std::string> sets;
  FlagSet flags;

  Bound() {
    flags.AddString("--source", "SOURCE", "where from", &source);
    flags.AddChoice("--format", {"table", "json"}, "output", &format);
    flags.AddInt64("--tgid", "N", "process", &tgid);
    flags.AddBool("--scan", "fresh scan", &scan);
    flags.AddRepeated("--set", "KEY=VALUE", "tunable", &sets);
  }
};

TEST(FlagSet, ParsesBothValueFormsAndKeepsPositionals) {
  Bound b;
  auto positional = b.flags.Parse({"a", "--source", "xml:x", "--tgid=42",
                                   "--scan", "--set", "k=1", "--set=j=2", "b"});
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_THAT(*positional, ElementsAre("a", "b"));
  EXPECT_EQ(b.source, "xml:x");
  EXPECT_EQ(b.tgid, 42);
  EXPECT_TRUE(b.scan);
  EXPECT_THAT(b.sets, ElementsAre("k=1", "j=2"));
}

TEST(FlagSet, DoubleDashEndsFlags) {
  Bound b;
  auto positional = b.flags.Parse({"--", "--scan"});
  ASSERT_TRUE(positional.ok());
  EXPECT_THAT(*positional, ElementsAre("--scan"));
  EXPECT_FALSE(b.scan);
}

TEST(FlagSet, RejectsUnknownFlag) {
  Bound b;
  auto result = b.flags.Parse({"--sauce", "x"});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("--sauce"));
}

TEST(FlagSet, RejectsMissingValue) {
  Bound b;
  auto result = b.flags.Parse({"--source"});
  EXPECT_THAT(result.status().message(), HasSubstr("--source needs a value"));
}

TEST(FlagSet, RejectsValueOutsideChoices) {
  Bound b;
  auto result = b.flags.Parse({"--format", "yaml"});
  EXPECT_THAT(result.status().message(), HasSubstr("table|json"));
  EXPECT_EQ(b.format, "table");
}

TEST(FlagSet, RejectsNonIntegerAndSwitchWithValue) {
  Bound b;
  EXPECT_FALSE(b.flags.Parse({"--tgid", "12x"}).ok());
  EXPECT_FALSE(b.flags.Parse({"--scan=yes"}).ok());
}

TEST(FlagSet, HelpListsEveryFlagWithDefaults) {
  Bound b;
  const std::string help = b.flags.Help();
  EXPECT_THAT(help, HasSubstr("--source SOURCE"));
  EXPECT_THAT(help, HasSubstr("(default: host)"));
  EXPECT_THAT(help, HasSubstr("--format table|json"));
  EXPECT_THAT(help, HasSubstr("--scan "));
  EXPECT_THAT(help, HasSubstr("--set KEY=VALUE"));
}

}  // namespace
}  // namespace schedcache::cli
