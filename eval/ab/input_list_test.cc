#include "eval/ab/input_list.h"

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string WriteList(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadInputList, SkipsCommentsAndRejectsABadEntryOnItsOwn) {
  const std::string path = WriteList("list-a.txt",
                                     "# traces of the fleet\n"
                                     "trace:a.trace.gz   # relative\n"
                                     "\n"
                                     "tarce:b.trace\n"
                                     "csv:/abs/c.csv\n"
                                     "workload:hackbench\n");
  absl::StatusOr<InputList> list = ReadInputList(path);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->entries, 4);
  ASSERT_EQ(list->inputs.size(), 3u);
  EXPECT_EQ(list->inputs[0].index, 0);
  EXPECT_EQ(list->inputs[0].line, 2);
  EXPECT_EQ(list->inputs[0].text, "trace:a.trace.gz");
  EXPECT_EQ(list->inputs[0].spec.path,
            (std::filesystem::path(::testing::TempDir()) / "a.trace.gz")
                .lexically_normal()
                .string());
  EXPECT_EQ(list->inputs[1].index, 2);  // the bad entry keeps its number
  EXPECT_EQ(list->inputs[1].spec.path, "/abs/c.csv");
  EXPECT_EQ(list->inputs[2].spec.kind, AbInputSpec::Kind::kWorkload);
  ASSERT_EQ(list->rejected.size(), 1u);
  EXPECT_THAT(list->rejected[0], HasSubstr(path + ":4: \"tarce:b.trace\""));
}

TEST(ReadInputList, RefusesStandardInputAsAnEntry) {
  absl::StatusOr<InputList> list =
      ReadInputList(WriteList("list-b.txt", "csv:-\nworkload:redis\n"));
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->rejected.size(), 1u);
  EXPECT_THAT(list->rejected[0], HasSubstr(":1: \"csv:-\": standard input"));
}

TEST(ReadInputList, AListWithoutOneUsableEntryIsAnError) {
  absl::StatusOr<InputList> list =
      ReadInputList(WriteList("list-c.txt", "# nothing\nbogus\n"));
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(),
              HasSubstr("no usable input (1 rejected)"));
}

TEST(ReadInputList, AMissingFileIsNotFoundNamingIt) {
  absl::StatusOr<InputList> list = ReadInputList("/nonexistent/list");
  EXPECT_TRUE(absl::IsNotFound(list.status()));
  EXPECT_THAT(list.status().message(), HasSubstr("/nonexistent/list"));
}

TEST(ParseShard, ReadsKOverN) {
  absl::StatusOr<ShardSpec> shard = ParseShard("3/4");
  ASSERT_TRUE(shard.ok()) << shard.status();
  EXPECT_EQ(shard->index, 3);
  EXPECT_EQ(shard->count, 4);
}

TEST(ParseShard, RefusesOutOfRangeAndMalformedNamingTheText) {
  EXPECT_THAT(ParseShard("4/4").status().message(),
              HasSubstr("--shard 4/4: K must be in 0..3"));
  EXPECT_THAT(ParseShard("0/0").status().message(),
              HasSubstr("--shard 0/0: N must be in 1.."));
  EXPECT_THAT(ParseShard("1-4").status().message(),
              HasSubstr("--shard 1-4: want K/N"));
  EXPECT_FALSE(ParseShard("-1/4").ok());
}

TEST(InShard, EveryEntryBelongsToExactlyOneShard) {
  // Entries 0..9 over 4 shards: round-robin, shard 1 gets 1, 5, 9.
  std::vector<int> of_shard_1;
  for (int i = 0; i < 10; ++i) {
    int owners = 0;
    for (int k = 0; k < 4; ++k) owners += InShard(i, ShardSpec{k, 4}) ? 1 : 0;
    EXPECT_EQ(owners, 1) << "entry " << i;
    if (InShard(i, ShardSpec{1, 4})) of_shard_1.push_back(i);
  }
  EXPECT_THAT(of_shard_1, ElementsAre(1, 5, 9));
}

}  // namespace
}  // namespace schedcache::ab
