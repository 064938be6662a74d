// `schedcache ab` and `schedcache demo` run in-process through RunCli.
#include <fstream>
#include <sstream>
#include <string>

#include "client/cli/cli.h"
#include "client/cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

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

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AbVerb, PrintsTheTableAndWritesEveryRequestedFile) {
  const std::string dir = ::testing::TempDir();
  Result r =
      Invoke({"ab", "--input", "workload:redis", "--duration-ms", "50",
              "--json", dir + "/ab.json", "--csv", dir + "/ab.csv", "--html",
              dir + "/ab.html", "--scan-trace", dir + "/scans.txt"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| 384.0 +384 +384 +384"));
  // Not a terminal: no progress line, only the files written.
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("\r")));
  EXPECT_THAT(r.err, HasSubstr("wrote " + dir + "/scans.visited-scan.txt"));
  const std::string json = Slurp(dir + "/ab.json");
  for (const char* key : {"\"policies\"", "\"cpusScanned\"", "\"agreement\"",
                          "\"preferredLlcChanges\"", "\"malformedLines\"",
                          "\"processes\"", "\"preferredLlc\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  EXPECT_THAT(Slurp(dir + "/ab.csv"), HasSubstr("visited-scan"));
  const std::string html = Slurp(dir + "/ab.html");
  EXPECT_THAT(html, HasSubstr("id=\"cpus-scanned\""));
  EXPECT_THAT(html, HasSubstr("id=\"llc-over-time\""));
  EXPECT_THAT(Slurp(dir + "/scans.full-scan.txt"),
              HasSubstr("sched_cache_scan: comm="));
}

TEST(AbVerb, NumaBalancingShrinksFullScanToOneNode) {
  Result r = Invoke({"ab", "--input", "workload:redis", "--duration-ms", "100",
                     "--policies", "full-scan", "--numa-balancing"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| +[0-9.]+ +192 "));
}

TEST(AbVerb, BadInputsAreUsageErrorsAndFailuresErrors) {
  EXPECT_EQ(Invoke({"ab"}).code, kExitUsage);
  EXPECT_EQ(Invoke({"ab", "--input", "pcap:x"}).code, kExitUsage);
  EXPECT_EQ(
      Invoke({"ab", "--input", "workload:redis", "--duration-ms", "0"}).code,
      kExitUsage);
  Result missing = Invoke({"ab", "--input", "trace:/nonexistent/trace"});
  EXPECT_EQ(missing.code, kExitError);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/trace"));
  Result unknown = Invoke({"ab", "--input", "workload:redis", "--policies",
                           "full-scan,fastest-scan"});
  EXPECT_EQ(unknown.code, kExitError);
  EXPECT_THAT(unknown.err, HasSubstr("fastest-scan"));
}

TEST(AbVerb, BadFlagValuesNameTheFlagAsTyped) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const Case cases[] = {
      {{"--duration-ms", "-5"}, "--duration-ms -5: must be > 0"},
      {{"--server-threads", "0"}, "--server-threads 0: must be in 1..100000"},
      {{"--client-threads", "-1"}, "--client-threads -1:"},
      {{"--groups", "0"}, "--groups 0:"},
      {{"--groups", "10", "--fds", "5001"}, "--fds 5001: must be in 1..5000"},
      {{"--hz", "0"}, "--hz 0:"},
      {{"--hz", "10001"}, "--hz 10001: must be in 1..10000"},
      {{"--spill-probability", "1.5"},
       "--spill-probability 1.5: must be in 0..1"},
      {{"--spill-probability", "nan"}, "--spill-probability nan:"},
      {{"--spill-probability", "lots"}, "--spill-probability lots:"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"ab", "--input", "workload:redis"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    Result r = Invoke(args);
    EXPECT_EQ(r.code, kExitUsage) << c.flags[0];
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("workload option")));
  }
}

TEST(AbVerb, SpillProbabilityChangesTheWorkload) {
  // With no spills every wake-up follows the preferred LLC; with every
  // wake-up spilling, the processes spread and the preferred LLC moves, so
  // the two tables cannot be equal.
  Result none = Invoke({"ab", "--input", "workload:redis", "--duration-ms",
                        "50", "--spill-probability", "0"});
  Result all = Invoke({"ab", "--input", "workload:redis", "--duration-ms", "50",
                       "--spill-probability", "1"});
  ASSERT_EQ(none.code, kExitOk) << none.err;
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_NE(none.out, all.out);
  EXPECT_THAT(Invoke({"ab", "--help"}).out, HasSubstr("--spill-probability"));
}

// A malformed --cpu-map is a usage error like any bad flag value; a trace
// CPU the map leaves outside the topology is a runtime error (exit 1).
TEST(AbVerb, CpuMapErrorsAreUsageErrorsNamingTheFlag) {
  const std::string trace = ::testing::TempDir() + "/ab_verb_empty.trace";
  std::ofstream(trace) << "";
  for (const char* map : {"garbage", "0-1=4-9", "0=0,1=0"}) {
    Result r = Invoke({"ab", "--input", "trace:" + trace, "--cpu-map", map});
    EXPECT_EQ(r.code, kExitUsage) << map << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(std::string("--cpu-map ") + map + ":"));
  }
  EXPECT_THAT(
      Invoke({"ab", "--input", "trace:" + trace, "--cpu-map", "0=0,1=0"}).err,
      HasSubstr("trace cpus 0 and 1"));
  EXPECT_THAT(Invoke({"ab", "--input", "trace:" + trace, "--cpu-map", "x"}).err,
              HasSubstr("FROM=TO (or FROM:TO)"));
  Result workload =
      Invoke({"ab", "--input", "workload:redis", "--cpu-map", "0=1"});
  EXPECT_EQ(workload.code, kExitUsage);
  EXPECT_THAT(workload.err, HasSubstr("trace: and csv: inputs only"));
}

// --scan-trace with --server is no usage error any more: the run goes to
// the server, and an unreachable one is a plain error naming the problem.
TEST(AbVerb, ScanTraceWithServerGoesToTheServer) {
  Result r = Invoke({"ab", "--input", "workload:redis", "--server",
                     "unix:/nonexistent/schedcached.sock", "--scan-trace",
                     ::testing::TempDir() + "/scans.txt"});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(Invoke({"ab", "--help"}).out, HasSubstr("WatchScans"));
}

TEST(DemoVerb, RunsTheAbOfTheThreeSeedPolicies) {
  Result r = Invoke({"demo", "--duration-ms", "100"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("this machine: "));
  EXPECT_THAT(r.out, HasSubstr("workload:redis"));
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| 384.0 +384 +384 +384"));
  EXPECT_THAT(r.out, HasSubstr("visited-scan"));
  EXPECT_THAT(r.out, HasSubstr("\nnone "));
}

}  // namespace
}  // namespace schedcache::cli
