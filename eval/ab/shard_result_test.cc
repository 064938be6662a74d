#include "eval/ab/shard_result.h"

#include <fstream>
#include <sstream>

#include "eval/report/json_report.h"
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
  EXPECT_TRUE(WriteJson(r, out).ok());
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

TEST(ShardResult, AWrongValueIsNamedByFileFieldPathAndValue) {
  const std::string path = ::testing::TempDir() + "/shard-bad.json";
  ASSERT_TRUE(WriteShardResult(OneShard(), path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  const std::string scans = "\"preferredLlcChanges\": 0";
  const size_t at = doc.find(scans);
  ASSERT_NE(at, std::string::npos) << doc;
  doc.replace(at, scans.size(), "\"preferredLlcChanges\": -3");
  const std::string bad = WriteText("shard-bad2.json", doc);
  absl::StatusOr<ShardResult> back = ReadShardResult(bad);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(
      back.status().message(),
      HasSubstr(bad + ": results[0].report.policies[0].preferredLlcChanges: "
                      "want an "
                      "unsigned integer, got -3"));
}

TEST(ShardResult, RefusesAnotherSchemaAndNotJson) {
  const std::string other =
      WriteText("not-shard.json", "{\"schema\": \"something/2\"}");
  EXPECT_THAT(
      ReadShardResult(other).status().message(),
      HasSubstr("schema: \"something/2\" is not \"schedcache-ab-shard/1\""));
  const std::string garbage = WriteText("garbage.json", "{\"schema\": ");
  EXPECT_THAT(ReadShardResult(garbage).status().message(),
              HasSubstr(garbage + ": not valid JSON"));
  EXPECT_TRUE(absl::IsNotFound(ReadShardResult("/nonexistent.json").status()));
}

}  // namespace
}  // namespace schedcache::ab
