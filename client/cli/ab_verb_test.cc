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
  Result r = Invoke({"ab", "--input", "workload:redis", "--duration-ms", "50",
                     "--json", dir + "/ab.json", "--csv", dir + "/ab.csv",
                     "--html", dir + "/ab.html", "--scan-trace",
                     dir + "/scans.txt"});
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
  EXPECT_EQ(Invoke({"ab", "--input", "workload:redis", "--duration-ms", "0"})
                .code,
            kExitUsage);
  Result missing = Invoke({"ab", "--input", "trace:/nonexistent/trace"});
  EXPECT_EQ(missing.code, kExitError);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/trace"));
  Result unknown = Invoke({"ab", "--input", "workload:redis", "--policies",
                           "full-scan,fastest-scan"});
  EXPECT_EQ(unknown.code, kExitError);
  EXPECT_THAT(unknown.err, HasSubstr("fastest-scan"));
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
