// `schedcache ab` and `schedcache demo` run in-process through RunCli.
#include <fstream>
#include <string>

#include "cli/cli.h"
#include "cli/testing/cli_capture.h"
#include "cli/verb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::cli {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

TEST(AbVerb, PrintsTheTableAndWritesEveryRequestedFile) {
  const std::string dir = ::testing::TempDir();
  CliResult r = InvokeCli(
      {"ab", "--input", "workload:redis", "--duration-ms", "50", "--json",
       dir + "/ab.json", "--csv", dir + "/ab.csv", "--html", dir + "/ab.html",
       "--scan-trace", dir + "/scans.txt", "--perfetto", dir + "/ab.pftrace"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| 384.0 +384 +384 +384"));
  // The cost table: full-scan is its own reference, 1.00x of its work.
  EXPECT_THAT(r.out,
              ContainsRegex("full-scan +\\| +[0-9]+ +[0-9.]+ +1.00x \\|"));
  // Not a terminal: no progress line, only the files written.
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("\r")));
  EXPECT_THAT(r.err, HasSubstr("wrote " + dir + "/scans.visited-scan.txt"));
  const std::string json = ReadWrittenFile(dir + "/ab.json");
  for (const char* key : {"\"policies\"", "\"cpusScanned\"", "\"agreement\"",
                          "\"preferredLlcChanges\"", "\"malformedLines\"",
                          "\"processes\"", "\"finalPreferredLlc\"", "\"cpuTimeNs\"",
                          "\"cpusScannedPerCpuSecond\"", "\"scanTimeShare\""}) {
    EXPECT_THAT(json, HasSubstr(key));
  }
  EXPECT_THAT(ReadWrittenFile(dir + "/ab.csv"), HasSubstr("visited-scan"));
  EXPECT_THAT(ReadWrittenFile(dir + "/ab.csv"),
              HasSubstr(",cpus_scanned_per_cpu_second,"));
  const std::string html = ReadWrittenFile(dir + "/ab.html");
  EXPECT_THAT(html, HasSubstr("id=\"cpus-scanned\""));
  EXPECT_THAT(html, HasSubstr("id=\"llc-over-time\""));
  // The topology view: 24 LLCs in each of the 3 policies' panels, shaded
  // from the busiest process's last scan.
  EXPECT_THAT(html, HasSubstr("id=\"topology\""));
  size_t cells = 0;
  for (size_t at = html.find("<rect class=\"llc\""); at != std::string::npos;
       at = html.find("<rect class=\"llc\"", at + 1)) {
    ++cells;
  }
  EXPECT_EQ(cells, 72u);
  EXPECT_THAT(html, HasSubstr("Shading: the summed occupancy"));
  EXPECT_THAT(ReadWrittenFile(dir + "/scans.full-scan.txt"),
              HasSubstr("sched_cache_scan: comm="));
  EXPECT_THAT(r.err, HasSubstr("wrote " + dir + "/ab.pftrace"));
  // tests/ab_perfetto_test.cc reads the trace; here: it holds the tracks.
  EXPECT_THAT(ReadWrittenFile(dir + "/ab.pftrace"),
              HasSubstr("visited-scan scans"));
}

TEST(AbVerb, NumaBalancingShrinksFullScanToOneNode) {
  CliResult r =
      InvokeCli({"ab", "--input", "workload:redis", "--duration-ms", "100",
                 "--policies", "full-scan", "--numa-balancing"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| +[0-9.]+ +192 "));
}

TEST(AbVerb, BadInputsAreUsageErrorsAndFailuresErrors) {
  EXPECT_EQ(InvokeCli({"ab"}).code, kExitUsage);
  EXPECT_EQ(InvokeCli({"ab", "--input", "pcap:x"}).code, kExitUsage);
  EXPECT_EQ(
      InvokeCli({"ab", "--input", "workload:redis", "--duration-ms", "0"}).code,
      kExitUsage);
  CliResult missing = InvokeCli({"ab", "--input", "trace:/nonexistent/trace"});
  EXPECT_EQ(missing.code, kExitError);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/trace"));
  CliResult unknown = InvokeCli({"ab", "--input", "workload:redis",
                                 "--policies", "full-scan,fastest-scan"});
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
      {{"--server-threads", "-1"}, "--server-threads -1: must be in 0..100000"},
      {{"--instances", "-2"}, "--instances -2: must be in 0..100000"},
      {{"--instances", "1000", "--client-threads", "100"},
       "--instances 1000 x (--server-threads 4 + --client-threads 100) = "
       "104000 threads: must be at most 100000"},
      {{"--client-threads", "-1"}, "--client-threads -1:"},
      {{"--groups", "0"}, "--groups 0:"},
      {{"--groups", "10", "--fds", "5001"}, "--fds 5001: must be in 1..5000"},
      {{"--hz", "0"}, "--hz 0:"},
      {{"--hz", "10001"}, "--hz 10001: must be in 1..10000"},
      {{"--spill-probability", "1.5"},
       "--spill-probability 1.5: must be in 0..1"},
      {{"--spill-probability", "nan"}, "--spill-probability nan:"},
      {{"--spill-probability", "lots"}, "--spill-probability lots:"},
      {{"--jobs", "0"}, "--jobs 0: must be in 1..1024"},
      {{"--jobs", "-3"}, "--jobs -3: must be in 1..1024"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"ab", "--input", "workload:redis"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CliResult r = InvokeCli(args);
    EXPECT_EQ(r.code, kExitUsage) << c.flags[0];
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("workload option")));
  }
}

TEST(AbVerb, GroupByTgidPrintsTheReportOfARunWithoutTheFlag) {
  // `none` never scans, so no wall-time scan figure differs between runs:
  // the whole table can be compared byte for byte.
  const std::vector<std::string> run = {"ab", "--input", "workload:redis",
                                        "--duration-ms", "50", "--policies",
                                        "none", "--jobs", "1"};
  std::vector<std::string> grouped = run;
  grouped.insert(grouped.end(), {"--group-by", "tgid"});
  const CliResult plain = InvokeCli(run);
  const CliResult tgid = InvokeCli(grouped);
  ASSERT_EQ(plain.code, kExitOk) << plain.err;
  ASSERT_EQ(tgid.code, kExitOk) << tgid.err;
  EXPECT_THAT(plain.out, HasSubstr("input:     workload:redis"));
  EXPECT_EQ(tgid.out, plain.out);
  // Another rule is named beside the input.
  grouped.back() = "comm";
  const CliResult comm = InvokeCli(grouped);
  ASSERT_EQ(comm.code, kExitOk) << comm.err;
  EXPECT_THAT(comm.out,
              ContainsRegex("input: +workload:redis .* group-by=comm\n"));
}

// --cache-groups-csv writes the group table the text report prints: the
// redis workload's servers are named "redis-server", and, grouped by comm,
// make one group whose row the CSV holds too. A list of --groups (a
// sweep) has no one table, so there the flag is a usage error, before
// anything runs.
TEST(AbVerb, CacheGroupsCsvWritesTheGroupTable) {
  const std::string csv = ::testing::TempDir() + "/groups-table.csv";
  const CliResult r = InvokeCli(
      {"ab", "--input", "workload:redis", "--duration-ms", "50", "--policies",
       "none", "--group-by", "comm", "--cache-groups-csv", csv});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("\nredis-server +[0-9]+ "));
  EXPECT_THAT(r.err, HasSubstr("wrote " + csv));
  const std::string table = ReadWrittenFile(csv);
  EXPECT_THAT(table, ::testing::StartsWith(
                         "group,id,members,runtime_s,final_llc_none,"
                         "runtime_on_preferred_llc_pct_none\n"));
  EXPECT_THAT(table, ContainsRegex("\nredis-server,[0-9]+,"));
  const CliResult sweep = InvokeCli(
      {"ab", "--input", "workload:hackbench", "--groups", "1,2", "--fds", "2",
       "--cache-groups-csv", csv});
  EXPECT_EQ(sweep.code, kExitUsage) << sweep.err;
  EXPECT_THAT(sweep.err, HasSubstr("--cache-groups-csv " + csv +
                                   ": a sweep has no one cache-group table"));
}

TEST(AbVerb, BadGroupByRulesAreUsageErrorsSayingWhy) {
  const std::string bad_file = ::testing::TempDir() + "/bad-groups.txt";
  std::ofstream(bad_file) << "# pairs\nredis 10\nredis\n";
  const struct {
    std::string rule;
    std::string message;
  } cases[] = {
      {"pid", "--group-by pid: \"pid\" is not tgid, comm, cgroup or "
              "file:PATH"},
      {"file:/nonexistent/groups.txt", "/nonexistent/groups.txt"},
      {"file:" + bad_file, bad_file + ":3: group \"redis\" names no process"},
  };
  for (const auto& c : cases) {
    CliResult r = InvokeCli({"ab", "--input", "workload:redis", "--group-by",
                             c.rule});
    EXPECT_EQ(r.code, kExitUsage) << c.rule << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
}

TEST(AbVerb, GroupByCgroupOnAWorkloadIsAnErrorNamingTheInput) {
  const CliResult r = InvokeCli({"ab", "--input", "workload:redis",
                                 "--duration-ms", "20", "--group-by",
                                 "cgroup"});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--group-by cgroup needs each process's "
                               "cgroup path, and input workload:redis"));
  EXPECT_THAT(r.err, HasSubstr("`schedcache record --output`"));
}

TEST(AbVerb, SpillProbabilityChangesTheWorkload) {
  // With no spills every wake-up follows the preferred LLC; with every
  // wake-up spilling, the processes spread and the preferred LLC moves, so
  // the two tables cannot be equal.
  CliResult none =
      InvokeCli({"ab", "--input", "workload:redis", "--duration-ms", "50",
                 "--spill-probability", "0"});
  CliResult all = InvokeCli({"ab", "--input", "workload:redis", "--duration-ms",
                             "50", "--spill-probability", "1"});
  ASSERT_EQ(none.code, kExitOk) << none.err;
  ASSERT_EQ(all.code, kExitOk) << all.err;
  EXPECT_NE(none.out, all.out);
  EXPECT_THAT(InvokeCli({"ab", "--help"}).out,
              HasSubstr("--spill-probability"));
}

// A malformed --cpu-map is a usage error like any bad flag value; a trace
// CPU the map leaves outside the topology is a runtime error (exit 1).
TEST(AbVerb, CpuMapErrorsAreUsageErrorsNamingTheFlag) {
  const std::string trace = ::testing::TempDir() + "/ab_verb_empty.trace";
  std::ofstream(trace) << "";
  for (const char* map : {"garbage", "0-1=4-9", "0=0,1=0"}) {
    CliResult r =
        InvokeCli({"ab", "--input", "trace:" + trace, "--cpu-map", map});
    EXPECT_EQ(r.code, kExitUsage) << map << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(std::string("--cpu-map ") + map + ":"));
  }
  EXPECT_THAT(
      InvokeCli({"ab", "--input", "trace:" + trace, "--cpu-map", "0=0,1=0"})
          .err,
      HasSubstr("trace cpus 0 and 1"));
  EXPECT_THAT(
      InvokeCli({"ab", "--input", "trace:" + trace, "--cpu-map", "x"}).err,
      HasSubstr("FROM=TO (or FROM:TO)"));
  CliResult workload =
      InvokeCli({"ab", "--input", "workload:redis", "--cpu-map", "0=1"});
  EXPECT_EQ(workload.code, kExitUsage);
  EXPECT_THAT(workload.err, HasSubstr("trace: and csv: inputs only"));
}

// --scan-trace with --server is no usage error any more: the run goes to
// the server, and an unreachable one is a plain error naming the problem.
TEST(AbVerb, ScanTraceWithServerGoesToTheServer) {
  CliResult r = InvokeCli({"ab", "--input", "workload:redis", "--server",
                           "unix:/nonexistent/schedcached.sock", "--scan-trace",
                           ::testing::TempDir() + "/scans.txt"});
  EXPECT_EQ(r.code, kExitError) << r.err;
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(InvokeCli({"ab", "--help"}).out, HasSubstr("WatchScans"));
}

TEST(AbVerb, InstancesMakeThatManyPairsOfProcessesAndValkeyIsAnInput) {
  CliResult r = InvokeCli({"ab", "--input", "workload:redis", "--instances",
                           "3", "--duration-ms", "50"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("workload:redis instances=3 servers=4 clients=8"));
  CliResult valkey =
      InvokeCli({"ab", "--input", "workload:valkey", "--duration-ms", "50",
                 "--client-threads", "2"});
  ASSERT_EQ(valkey.code, kExitOk) << valkey.err;
  EXPECT_THAT(valkey.out, ContainsRegex("workload:valkey instances=[0-9]+ "
                                        "servers=[0-9]+ clients=2 "));
  const std::string help = InvokeCli({"ab", "--help"}).out;
  EXPECT_THAT(help, HasSubstr("workload:valkey"));
  EXPECT_THAT(help, HasSubstr("--instances N"));
}

// --perfetto goes with --server (the server's scans carry their
// occupancy): what stops this run is the missing server, not a usage error.
TEST(AbVerb, PerfettoWithAnInputListIsAUsageErrorButNotWithServer) {
  const std::string trace = ::testing::TempDir() + "/ab.pftrace";
  CliResult remote =
      InvokeCli({"ab", "--input", "workload:redis", "--server",
                 "unix:/nonexistent/schedcached.sock", "--perfetto", trace});
  EXPECT_EQ(remote.code, kExitError) << remote.err;
  EXPECT_THAT(remote.err, HasSubstr("UNAVAILABLE"));
  CliResult list = InvokeCli(
      {"ab", "--inputs-file", "/nonexistent/list.txt", "--perfetto", trace});
  EXPECT_EQ(list.code, kExitUsage);
  EXPECT_THAT(list.err, HasSubstr("--perfetto takes one --input"));
  EXPECT_THAT(InvokeCli({"ab", "--help"}).out, HasSubstr("--perfetto FILE"));
}

TEST(DemoVerb, RunsTheAbOfTheThreeSeedPolicies) {
  CliResult r = InvokeCli({"demo", "--duration-ms", "100"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("this machine: "));
  EXPECT_THAT(r.out, HasSubstr("workload:valkey instances="));
  EXPECT_THAT(r.out, ContainsRegex("full-scan +\\| 384.0 +384 +384 +384"));
  EXPECT_THAT(r.out, HasSubstr("visited-scan"));
  EXPECT_THAT(r.out, HasSubstr("\nnone "));
}

}  // namespace
}  // namespace schedcache::cli
