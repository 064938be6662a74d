// End-to-end tests of the built `schedcache` binary: real process, real exit
// codes, real stdout.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kBinary = std::string(SCHEDCACHE_BINARY_DIR) + "/bin/schedcache";
const std::string kEpycXml = std::string(SCHEDCACHE_SHARED_DATA_DIR) +
                             "/topologies/amd-epyc9654-zen4-2s.xml";

struct Outcome {
  int exit_code = -1;
  std::string out;
};

// RunSchedcache runs the binary with `args` (already shell-quoted), stderr
// discarded, and returns its exit code and stdout.
Outcome RunSchedcache(const std::string& args) {
  Outcome outcome;
  const std::string command = kBinary + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) {
    outcome.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

bool HaveEpycXml() { return std::ifstream(kEpycXml).good(); }

TEST(SchedcacheCli, TopologyTableOfEpyc9654) {
  if (!HaveEpycXml()) GTEST_SKIP() << kEpycXml << " is absent";
  Outcome r = RunSchedcache("topology --source 'xml:" + kEpycXml + "'");
  ASSERT_EQ(r.exit_code, 0);
  // MANIFEST.tsv: 2 packages, 2 NUMA nodes, 192 cores, 384 PUs, 24 L3s of
  // 16 PUs; hwloc's reference table starts 0-7,192-199 and 8-15,200-207.
  EXPECT_THAT(r.out, HasSubstr("2 packages, 2 NUMA nodes, 192 cores, "
                               "384 CPUs (SMT 2), 24 L3 LLCs"));
  EXPECT_THAT(r.out, HasSubstr("\n0     L3     32 MiB    16    0-7,192-199\n"));
  EXPECT_THAT(r.out, HasSubstr("\n1     L3     32 MiB    16    8-15,200-207\n"));
}

TEST(SchedcacheCli, TopologyJsonUsesProtoJsonMapping) {
  Outcome r = RunSchedcache(
      "topology --source 'synthetic:pack:1 l3:2 core:2 pu:1' --format json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("{"));
  EXPECT_THAT(r.out, HasSubstr("\"totalCpus\":4"));
  EXPECT_THAT(r.out, HasSubstr("\"smtThreads\":1"));
  // Two L3s of two CPUs each; uint64 sizes are strings in proto JSON.
  EXPECT_THAT(r.out, HasSubstr("\"cpus\":[0,1]"));
  EXPECT_THAT(r.out, HasSubstr("\"cpus\":[2,3]"));
  EXPECT_THAT(r.out, HasSubstr("\"sizeBytes\":\""));
}

TEST(SchedcacheCli, BadSourceExitsOne) {
  EXPECT_EQ(RunSchedcache("topology --source xml:/nonexistent.xml").exit_code,
            1);
  EXPECT_EQ(RunSchedcache("topology --source 'synthetic:nonsense'").exit_code,
            1);
  EXPECT_EQ(RunSchedcache("topology --source carrier-pigeon").exit_code, 1);
}

TEST(SchedcacheCli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunSchedcache("no-such-verb").exit_code, 2);
  EXPECT_EQ(RunSchedcache("topology --no-such-flag").exit_code, 2);
  EXPECT_EQ(RunSchedcache("").exit_code, 2);
}

TEST(SchedcacheCli, DemoRunsTheAbOnTheBuiltinEpycShape) {
  Outcome r = RunSchedcache("demo --duration-ms 100");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("this machine: "));
  EXPECT_THAT(r.out, HasSubstr("synthetic:pack:2 numa:1 l3:12 core:8 pu:2"));
  EXPECT_THAT(r.out, HasSubstr("384 CPUs (SMT 2), 24 L3 LLCs"));
  // Full-scan's row: mean, p50, p99 and max CPUs scanned are all 384.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("full-scan +\\| 384.0 +384 +384 +384"));
  EXPECT_THAT(r.out, HasSubstr("visited-scan"));
  EXPECT_THAT(r.out, HasSubstr("none"));
}

}  // namespace
