// End-to-end tests of the built binaries: a real schedcached process on a
// temporary Unix socket, driven by the `schedcache` verbs.
#include <signal.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "schedcache/client.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kBin = std::string(SCHEDCACHE_BINARY_DIR) + "/bin/";

// Process 4242 (2 threads) ticks on CPUs 0 and 1 (LLC 0) for 20 ms: the
// scan at the first tick after an epoch boundary (docs/MODEL.md, tick) makes
// LLC 0 preferred, as in PreferLlc0Events. The last row is bad (no CPU 99).
constexpr char kCsv[] =
    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
    "footprint_pages,comm\n"
    "0,0,4242,4242,,,,,,\n"
    "1000,0,4242,4242,1000000,1,2,,,redis-server\n"
    "1000,1,4242,4243,1000000,1,,,,redis-server\n"
    "20001000,0,4242,4242,1000000,1,,,,redis-server\n"
    "20001000,1,4242,4243,1000000,1,,,,redis-server\n"
    "20001000,99,4242,4243,1000000,1,,,,redis-server\n";

class ServiceE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The socket's parent directory does not exist yet: the server makes it.
    socket_ = dir_.path() + "/run/schedcached.sock";
    server_ = StartServer();
    ASSERT_NE(server_, nullptr);
  }

  std::unique_ptr<Process> StartServer() {
    std::unique_ptr<Process> server = Process::Start(
        {kBin + "schedcached", "--listen=unix:" + socket_,
         std::string("--policy_plugin=") + SCHEDCACHE_EXAMPLE_PLUGIN},
        dir_.path() + "/server.log");
    if (server == nullptr) return server;
    client::Options options;
    options.address = "unix:" + socket_;
    const absl::Status ready = client::Client::Connect(options)->WaitForReady();
    EXPECT_TRUE(ready.ok()) << ready;
    return server;
  }

  CommandResult Cli(std::vector<std::string> args,
                    const std::string& input = "") {
    args.insert(args.begin(), kBin + "schedcache");
    args.push_back("--server=unix:" + socket_);
    return RunCommand(args, input);
  }

  void CreateSession(const std::string& name) {
    CommandResult created =
        Cli({"session", "create", "--name", name, "--topology",
             "synthetic:pack:1 l3:2 core:4 pu:2", "--policies",
             "full-scan,visited-scan,none", "--set", "aggr_tolerance=1"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    EXPECT_THAT(created.out, HasSubstr("created session " + name));
  }

  TempDir dir_;
  std::string socket_;
  std::unique_ptr<Process> server_;
};

TEST_F(ServiceE2eTest, SocketIsOwnerOnly) {
  struct stat info;
  ASSERT_EQ(::stat(socket_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
}

TEST_F(ServiceE2eTest, SessionFeedRecommendReportDelete) {
  CreateSession("demo");
  CommandResult list = Cli({"session", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("default"));
  EXPECT_THAT(list.out, HasSubstr("demo"));

  const std::string csv_path = dir_.path() + "/samples.csv";
  ASSERT_EQ(RunCommand({"/bin/sh", "-c", "cat > '" + csv_path + "'"}, kCsv)
                .exit_code,
            0);
  CommandResult feed = Cli({"feed", "--session", "demo", csv_path});
  ASSERT_EQ(feed.exit_code, 0) << feed.err;
  EXPECT_THAT(feed.out, StartsWith("accepted 5, rejected 1\n"));
  // The server's rejection of event 5 is named by its CSV line.
  EXPECT_THAT(feed.out, HasSubstr("  line 7: cpu 99"));

  CommandResult recommend =
      Cli({"recommend", "--session", "demo", "--tgid", "4242"});
  ASSERT_EQ(recommend.exit_code, 0) << recommend.err;
  // full-scan examines all 16 CPUs of both LLCs; visited-scan the 2 CPUs
  // the process ran on.
  EXPECT_THAT(recommend.out, MatchesRegex("(.|\n)*\nfull-scan +0 +0 +- +last +16 +2 (.|\n)*"));
  EXPECT_THAT(recommend.out, MatchesRegex("(.|\n)*\nvisited-scan +0 +0 +- +last +2 +1 (.|\n)*"));
  EXPECT_THAT(recommend.out, HasSubstr("not_cache_aware"));

  CommandResult json =
      Cli({"recommend", "--session", "demo", "--tgid", "4242", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_THAT(json.out, StartsWith("{\"tgid\":4242"));

  CommandResult report = Cli({"report", "--session", "demo"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("4 samples, 1 hand-overs, 0 process exits, 1 rejected"));

  CommandResult deleted = Cli({"session", "delete", "--name", "demo"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(Cli({"report", "--session", "demo"}).exit_code, 1);
}

TEST_F(ServiceE2eTest, FeedReadsStdin) {
  CommandResult feed = Cli({"feed", "-"}, kCsv);
  ASSERT_EQ(feed.exit_code, 0) << feed.err;
  // The default session runs on this host's topology; CPU 99 is rejected
  // at least (a small host may lack CPU 1 as well).
  EXPECT_THAT(feed.out, StartsWith("accepted "));
}

TEST_F(ServiceE2eTest, FeedRejectsMalformedRowsOnTheirOwn) {
  CreateSession("m");
  // Line 3 has a bad cpu, line 5 too few columns; line 7 is kCsv's CPU 99.
  const std::string csv =
      "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
      "footprint_pages,comm\n"
      "0,0,4242,4242,,,,,,\n"
      "1000,x,4242,4242,1000000,1,2,,,redis-server\n"
      "1000,1,4242,4243,1000000,1,,,,redis-server\n"
      "1000,1,4242\n"
      "20001000,0,4242,4242,1000000,1,,,,redis-server\n"
      "20001000,99,4242,4243,1000000,1,,,,redis-server\n";
  CommandResult feed = Cli({"feed", "--session", "m", "-"}, csv);
  ASSERT_EQ(feed.exit_code, 0) << feed.err;
  EXPECT_EQ(feed.out,
            "accepted 3, rejected 3\n"
            "  line 3: column cpu: \"x\" is not an integer\n"
            "  line 5: expected 10 columns (" +
                std::string(
                    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,"
                    "numa_node,footprint_pages,comm") +
                "), found 3\n"
                "  line 7: cpu 99 is not a CPU of topology "
                "synthetic:pack:1 l3:2 core:4 pu:2\n");
  CommandResult report = Cli({"report", "--session", "m"});
  EXPECT_THAT(report.out, HasSubstr("2 samples, 1 hand-overs, 0 process exits, 1 rejected"));
}

// Two processes share cache group 77 (the CSV's cache_group column): the
// report lists the group with its runtime, the delta_ns of the samples
// naming it, 1000000 + 2000000 + 1000000 + 500000 = 4500000 ns, and none's
// share, which never prefers, 0.000. A session whose samples name no group
// (the test above) prints no group table.
TEST_F(ServiceE2eTest, ReportListsTheCacheGroupsSamplesNamed) {
  CreateSession("g");
  const std::string csv =
      "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
      "footprint_pages,cache_group,comm\n"
      "1000,0,4242,4242,1000000,1,1,,,77,server\n"
      "1000,1,5151,5151,2000000,1,1,,,77,client\n"
      "20001000,0,4242,4242,1000000,1,,,,77,server\n"
      "20001000,1,5151,5151,500000,1,,,,77,client\n";
  ASSERT_EQ(Cli({"feed", "--session", "g", "-"}, csv).exit_code, 0);
  CommandResult report = Cli({"report", "--session", "g"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out,
              HasSubstr("\ncache groups: 1, 0 ended ones left out;"));
  EXPECT_THAT(report.out,
              HasSubstr("\nGROUP RUNTIME_NS     full-scan visited-scan none \n"));
  EXPECT_THAT(report.out,
              ContainsRegex("\n77    4500000        [-0-9.]+ +[-0-9.]+ +0\\.000\n"));
  CreateSession("plain");
  ASSERT_EQ(Cli({"feed", "--session", "plain", "-"}, kCsv).exit_code, 0);
  EXPECT_THAT(Cli({"report", "--session", "plain"}).out,
              Not(HasSubstr("cache groups")));
}

TEST_F(ServiceE2eTest, WatchUsageAndRefusal) {
  EXPECT_EQ(Cli({"watch", "--count", "-1"}).exit_code, 2);
  // A refused watch prints its error and no table header.
  CommandResult missing = Cli({"watch", "--session", "nosuch"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_THAT(missing.err, HasSubstr("nosuch"));
}

TEST_F(ServiceE2eTest, SessionCreateDefaultsAndMissingXml) {
  CommandResult created = Cli({"session", "create", "--name", "d",
                               "--topology", "synthetic:pack:1 l3:2 core:2 pu:1"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  // The same default policies as the server's `default` session.
  EXPECT_THAT(created.out, HasSubstr("policies full-scan,visited-scan,none;"));
  CommandResult missing = Cli({"session", "create", "--name", "x",
                               "--topology", "xml:/nonexistent.xml"});
  EXPECT_EQ(missing.exit_code, 1);
  // As the topology verb says it: the source and the OS's reason.
  EXPECT_THAT(missing.err,
              HasSubstr("topology xml:/nonexistent.xml: cannot read "
                        "/nonexistent.xml (No such file or directory)"));
}

TEST_F(ServiceE2eTest, TablesFitLongPolicyNames) {
  CommandResult created = Cli(
      {"session", "create", "--name", "p", "--topology",
       "synthetic:pack:1 l3:2 core:2 pu:1", "--policies",
       "full-scan,llc-most-runtime"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  ASSERT_EQ(Cli({"feed", "--session", "p", "-"}, kCsv).exit_code, 0);
  // "llc-most-runtime" is 16 characters: the name column is 16 wide, then
  // one space, in the header and every row.
  CommandResult report = Cli({"report", "--session", "p"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("\nPOLICY           SCANS "));
  EXPECT_THAT(report.out, ContainsRegex("\nfull-scan        [0-9]"));
  EXPECT_THAT(report.out, ContainsRegex("\nllc-most-runtime [0-9]"));
  CommandResult recommend =
      Cli({"recommend", "--session", "p", "--tgid", "4242"});
  ASSERT_EQ(recommend.exit_code, 0) << recommend.err;
  EXPECT_THAT(recommend.out, StartsWith("POLICY           LLC "));
  EXPECT_THAT(recommend.out, ContainsRegex("\nfull-scan        [-0-9]"));
  EXPECT_THAT(recommend.out, ContainsRegex("\nllc-most-runtime [-0-9]"));
  // policies: names padded to the longest, so descriptions line up.
  CommandResult policies = Cli({"policies"});
  ASSERT_EQ(policies.exit_code, 0) << policies.err;
  EXPECT_THAT(policies.out, ContainsRegex("(^|\n)full-scan        [^ ]"));
  EXPECT_THAT(policies.out, ContainsRegex("\nllc-most-runtime [^ ]"));
}

TEST_F(ServiceE2eTest, ErrorsAndUsage) {
  CommandResult unknown = Cli({"recommend", "--tgid", "777"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("777"));
  EXPECT_EQ(Cli({"recommend"}).exit_code, 2);
  EXPECT_EQ(Cli({"session", "explode"}).exit_code, 2);
  EXPECT_EQ(Cli({"session", "create"}).exit_code, 2);
  CommandResult bad_policy = Cli({"session", "create", "--name", "x",
                                  "--policies", "no-such-policy"});
  EXPECT_EQ(bad_policy.exit_code, 1);
  EXPECT_THAT(bad_policy.err, HasSubstr("no-such-policy"));
  CommandResult bad_csv = Cli({"feed", "-"}, "not,a,header\n");
  EXPECT_EQ(bad_csv.exit_code, 1);
  EXPECT_THAT(bad_csv.err, HasSubstr("header"));
  EXPECT_EQ(RunCommand({kBin + "schedcache", "policies",
                        "--server=unix:" + dir_.path() + "/nothing.sock"})
                .exit_code,
            1);
}

TEST_F(ServiceE2eTest, TopologyVerbAsksTheServerInTheSameFormats) {
  CreateSession("t");
  const std::string source = "synthetic:pack:1 l3:2 core:4 pu:2";
  for (const std::string format : {"table", "json"}) {
    CommandResult here = RunCommand({kBin + "schedcache", "topology",
                                     "--source", source, "--format", format});
    ASSERT_EQ(here.exit_code, 0) << here.err;
    CommandResult asked =
        Cli({"topology", "--session", "t", "--format", format});
    ASSERT_EQ(asked.exit_code, 0) << asked.err;
    EXPECT_EQ(asked.out, here.out) << format;
  }
  EXPECT_THAT(Cli({"topology", "--session", "t"}).out,
              StartsWith("source: synthetic:pack:1 l3:2 core:4 pu:2\n"
                         "1 packages, 1 NUMA nodes, 8 cores, 16 CPUs (SMT 2), "
                         "2 L3 LLCs\n"));
  // Without --session: the server's host, the machine this test runs on.
  CommandResult host_here = RunCommand({kBin + "schedcache", "topology"});
  CommandResult host_asked = Cli({"topology"});
  ASSERT_EQ(host_asked.exit_code, 0) << host_asked.err;
  EXPECT_EQ(host_asked.out, host_here.out);

  CommandResult missing = Cli({"topology", "--session", "nosuch"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("session \"nosuch\" not found"));
  CommandResult both = Cli({"topology", "--source", source});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("give one or the other"));
  EXPECT_EQ(RunCommand({kBin + "schedcache", "topology",
                        "--server=unix:" + dir_.path() + "/nothing.sock"})
                .exit_code,
            1);
  CommandResult help = RunCommand({kBin + "schedcache", "topology", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--server ADDR"));
  EXPECT_THAT(help.out, HasSubstr("ask this schedcached instead"));
}

TEST_F(ServiceE2eTest, PoliciesListsBuiltins) {
  CommandResult policies = Cli({"policies"});
  ASSERT_EQ(policies.exit_code, 0) << policies.err;
  EXPECT_THAT(policies.out, HasSubstr("full-scan"));
  EXPECT_THAT(policies.out, HasSubstr("visited-scan"));
  EXPECT_THAT(policies.out, HasSubstr("epoch_period_jiffies"));
  // Tunables with value names show the default by name.
  EXPECT_THAT(policies.out, ContainsRegex("numa_balancing +default false "));
  EXPECT_THAT(policies.out, ContainsRegex("enable +default auto "));
}

TEST_F(ServiceE2eTest, WatchPrintsChangesCausedByFeed) {
  CreateSession("w");
  std::unique_ptr<Process> watch = Process::Start(
      {kBin + "schedcache", "watch", "--session", "w", "--count", "2",
       "--server=unix:" + socket_});
  ASSERT_NE(watch, nullptr);
  // The header is printed once the stream is attached to the session.
  std::optional<std::string> header = watch->ReadLine();
  ASSERT_TRUE(header.has_value());
  EXPECT_THAT(*header, StartsWith("TIMESTAMP_NS"));
  ASSERT_EQ(Cli({"feed", "--session", "w", "-"}, kCsv).exit_code, 0);
  const std::string changes = watch->ReadAll();
  EXPECT_THAT(changes, HasSubstr("full-scan"));
  EXPECT_THAT(changes, HasSubstr("visited-scan"));
  EXPECT_THAT(changes, MatchesRegex("20001000 +4242 +full-scan +- +0(.|\n)*|(.|\n)*\n20001000 +4242 +full-scan +- +0(.|\n)*"));
  EXPECT_EQ(watch->WaitForExit(absl::Seconds(10)), 0);
}

TEST_F(ServiceE2eTest, WatchSnapshotAsJsonLinesWithFilters) {
  CreateSession("j");
  ASSERT_EQ(Cli({"feed", "--session", "j", "-"}, kCsv).exit_code, 0);
  std::unique_ptr<Process> watch = Process::Start(
      {kBin + "schedcache", "watch", "--session", "j", "--snapshot",
       "--format", "json", "--policy", "visited-scan", "--tgid", "4242",
       "--server=unix:" + socket_});
  ASSERT_NE(watch, nullptr);
  // One JSON object per line: the start, the one entry the filters leave
  // (4242 under visited-scan, LLC 0 as the feed test above shows), Synced
  // at the feed's two changes.
  std::optional<std::string> start = watch->ReadLine();
  ASSERT_TRUE(start.has_value());
  EXPECT_THAT(*start, StartsWith("{\"snapshotStart\":{\"cause\":"
                                 "\"SNAPSHOT_CAUSE_REQUESTED\""));
  EXPECT_THAT(*start, HasSubstr("\"entries\":\"1\""));
  std::optional<std::string> entry = watch->ReadLine();
  ASSERT_TRUE(entry.has_value());
  EXPECT_THAT(*entry, HasSubstr("\"tgid\":4242,\"policy\":\"visited-scan\""));
  EXPECT_THAT(*entry, HasSubstr("\"newLlc\":0"));
  EXPECT_THAT(*entry, HasSubstr("\"snapshot\":true"));
  std::optional<std::string> synced = watch->ReadLine();
  ASSERT_TRUE(synced.has_value());
  EXPECT_THAT(*synced, StartsWith("{\"synced\":{\"sequence\":\"2\""));
  // Deleting the session ends the watch: exit 1, NOT_FOUND on stderr.
  ASSERT_EQ(Cli({"session", "delete", "--name", "j"}).exit_code, 0);
  EXPECT_EQ(watch->WaitForExit(absl::Seconds(10)), 1);
  EXPECT_EQ(Cli({"watch", "--tgid", "0"}).exit_code, 2);
}

TEST_F(ServiceE2eTest, SigtermEndsOpenWatchWithErrorAndExitsZero) {
  std::unique_ptr<Process> watch = Process::Start(
      {kBin + "schedcache", "watch", "--server=unix:" + socket_});
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(watch->ReadLine().has_value());  // attached
  server_->Signal(SIGTERM);
  EXPECT_EQ(server_->WaitForExit(absl::Seconds(5)), 0);
  // The server ended the watch with UNAVAILABLE ("server stopping"): a
  // watch that did not end by its own --count is an error.
  EXPECT_EQ(watch->WaitForExit(absl::Seconds(5)), 1);
  // The socket file is gone.
  struct stat info;
  EXPECT_NE(::stat(socket_.c_str(), &info), 0);
}

TEST_F(ServiceE2eTest, StaleSocketIsReplacedLiveOneIsNot) {
  // A second server on the same live socket fails.
  CommandResult second = RunCommand(
      {kBin + "schedcached", "--listen=unix:" + socket_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.err, HasSubstr("another server owns " + socket_));
  // A killed server leaves its socket behind; a new one replaces it.
  server_->Signal(SIGKILL);
  server_->WaitForExit(absl::Seconds(5));
  struct stat info;
  ASSERT_EQ(::stat(socket_.c_str(), &info), 0);
  server_ = StartServer();
  ASSERT_NE(server_, nullptr);
  EXPECT_EQ(Cli({"policies"}).exit_code, 0);
}

TEST(SchedcachedFlags, BadLimitValuesExitTwoNamingTheFlag) {
  TempDir dir;
  for (const char* flag :
       {"--max_streams=-1", "--max_streams=0", "--max_batch_events=-5",
        "--max_message_bytes=-1", "--max_watch_queue=-1",
        "--shutdown_grace_seconds=-3", "--max_processes=0", "--max_sessions=0",
        "--max_watch_streams=0", "--max_topology_cpus=0"}) {
    CommandResult started = RunCommand(
        {kBin + "schedcached", "--listen=unix:" + dir.path() + "/s.sock", flag});
    EXPECT_EQ(started.exit_code, 2) << flag;
    EXPECT_THAT(started.err, HasSubstr(std::string(flag) + " is out of range"));
  }
}

TEST(SchedcachedFlags, StrayArgumentExitsTwo) {
  TempDir dir;
  CommandResult started = RunCommand(
      {kBin + "schedcached", "--listen=unix:" + dir.path() + "/s.sock",
       "stray"});
  EXPECT_EQ(started.exit_code, 2);
  EXPECT_THAT(started.err, HasSubstr("\"stray\""));
}

TEST(SchedcachedHelp, ListsItsFlags) {
  CommandResult help = RunCommand({kBin + "schedcached", "--help"});
  for (const char* flag :
       {"--listen", "--topology", "--policy_plugin", "--max_sessions",
        "--max_processes", "--max_batch_events", "--max_message_bytes",
        "--max_streams", "--max_watch_streams", "--max_topology_cpus"}) {
    EXPECT_THAT(help.out + help.err, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace schedcache::test_support
