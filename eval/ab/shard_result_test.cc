#include "eval/ab/shard_result.h"

#include <fstream>
#include <sstream>

#include "eval/ab/ab_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

using ::testing::HasSubstr;

// OneResult has a value of every kind the reader must bring back exactly:
// a 64-bit timestamp beyond a double's 2^53, a fraction, an absent
// agreement, a no-preference LLC and a time series.
AbResult OneResult() {
  AbResult r;
  r.input.description = "trace:/t/a.trace";
  r.input.topology = "1 package, 2 LLCs, 8 CPUs";
  r.input.topology_source = "synthetic:x";
  r.input.samples = 12;
  r.input.malformed_examples = {"line 2: \"quoted\""};
  r.input.start_ns = 9'007'199'254'740'993;  // 2^53 + 1
  r.input.hz = 250;
  PolicyResult& p = r.policies.emplace_back();
  p.report.name = "full-scan";
  p.report.scans = 3;
  p.report.cpus_scanned = {3, 8.0 / 3.0, 8, 8, 8};
  p.report.runtime_on_preferred_llc = 0.1;
  p.cpus_scanned_histogram = {{8, 3}};
  r.processes.push_back(
      {42, "w", 1000, {kNoPreferredLlc}, {{{5, 1}, {9, kNoPreferredLlc}}}, {}});
  return r;
}

ShardResult OneShard() {
  ShardResult shard;
  shard.shard = {1, 4};
  shard.config = {.topology = "synthetic:x",
                  .policies = {"full-scan"},
                  .trigger = "tick",
                  .settings = {"aggr_tolerance=50"},
                  .hz = 250,
                  .cpu_map = "",
                  .workload = "seed=1"};
  shard.entries = 6;
  shard.inputs = {{0, "trace:a"}, {1, "trace:/t/a.trace"}};
  shard.results.emplace_back(1, OneResult());
  return shard;
}

std::string JsonOf(const AbResult& r) {
  std::ostringstream out;
  EXPECT_TRUE(WriteJson(AbResultToProto(r), out).ok());
  return out.str();
}

TEST(ShardResult, RoundTripsEveryFieldExactly) {
  const std::string path = ::testing::TempDir() + "/shard-rt.json";
  ASSERT_TRUE(WriteShardResult(OneShard(), path).ok());
  absl::StatusOr<ShardResult> back = ReadShardResult(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shard.index, 1);
  EXPECT_EQ(back->shard.count, 4);
  EXPECT_EQ(back->config.settings, OneShard().config.settings);
  EXPECT_EQ(back->entries, 6);
  ASSERT_EQ(back->inputs.size(), 2u);
  EXPECT_EQ(back->inputs[1].input, "trace:/t/a.trace");
  ASSERT_EQ(back->results.size(), 1u);
  EXPECT_EQ(back->results[0].first, 1);
  // The report writer's own output, byte for byte: every value came back.
  EXPECT_EQ(JsonOf(back->results[0].second), JsonOf(OneResult()));
}

std::string WriteText(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ShardResult, AWrongValueIsNamedByFileFieldPathAndValue) {
  const std::string path = ::testing::TempDir() + "/shard-bad.json";
  ASSERT_TRUE(WriteShardResult(OneShard(), path).ok());
  std::string doc = ReadText(path);
  const std::string changes = "\"preferredLlcChanges\":\"0\"";
  const size_t at = doc.find(changes);
  ASSERT_NE(at, std::string::npos) << doc;
  doc.replace(at, changes.size(), "\"preferredLlcChanges\":-3");
  const std::string bad = WriteText("shard-bad2.json", doc);
  absl::StatusOr<ShardResult> back = ReadShardResult(bad);
  ASSERT_FALSE(back.ok());
  // protobuf's account names the field by its proto path.
  EXPECT_THAT(back.status().message(),
              HasSubstr(bad + ": not JSON of schedcache.v1.AbShard: "
                              "(results[0].report.policies[0].report."
                              "preferred_llc_changes): invalid value -3 for "
                              "type TYPE_UINT64"));
}

TEST(ShardResult, AReportOfTheWrongShapeIsNamedByItsPlace) {
  const std::string path = ::testing::TempDir() + "/shard-shape.json";
  ASSERT_TRUE(WriteShardResult(OneShard(), path).ok());
  std::string doc = ReadText(path);
  const std::string llcs = "\"finalPreferredLlc\":[-1]";
  const size_t at = doc.find(llcs);
  ASSERT_NE(at, std::string::npos) << doc;
  doc.replace(at, llcs.size(), "\"finalPreferredLlc\":[-1,2]");
  const std::string bad = WriteText("shard-shape2.json", doc);
  EXPECT_THAT(ReadShardResult(bad).status().message(),
              HasSubstr(bad + ": results[0].report: processes[tgid=42]."
                              "final_preferred_llc has 2 entries, want one "
                              "per policy (1)"));
}

// A shard of the hand-written JSON (schema /1, before the AbShard message)
// is refused for its version, naming the file and both versions, however
// the rest of it differs from an AbShard.
TEST(ShardResult, RefusesAnotherSchemaNamingBothVersions) {
  const std::string v1 = WriteText(
      "shard-v1.json",
      R"({"schema": "schedcache-ab-shard/1", "shard": {"index": 0, )"
      R"("count": 2}, "results": [{"index": 0, "report": {"reference": )"
      R"("full-scan", "processes": [{"preferredLlc": {"full-scan": null}}]}}]})");
  absl::StatusOr<ShardResult> old = ReadShardResult(v1);
  EXPECT_TRUE(absl::IsInvalidArgument(old.status()));
  EXPECT_THAT(old.status().message(),
              HasSubstr(v1 + ": schema \"schedcache-ab-shard/1\" is not "
                             "\"schedcache-ab-shard/2\", the version this "
                             "schedcache reads"));
  const std::string none = WriteText("not-shard.json", "{\"entries\": 3}");
  EXPECT_THAT(ReadShardResult(none).status().message(),
              HasSubstr(none + ": schema \"\" is not "
                               "\"schedcache-ab-shard/2\""));
}

TEST(ShardResult, RefusesWhatIsNotJsonAndAMissingFile) {
  const std::string garbage = WriteText("garbage.json", "{\"schema\": ");
  EXPECT_THAT(ReadShardResult(garbage).status().message(),
              HasSubstr(garbage + ": not valid JSON (a file of `schedcache ab "
                                  "--shard K/N --json FILE`?)"));
  EXPECT_TRUE(absl::IsNotFound(ReadShardResult("/nonexistent.json").status()));
}

}  // namespace
}  // namespace schedcache::ab
