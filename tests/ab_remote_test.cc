// `schedcache ab --server`: the same evaluation on a real in-process server
// gives the same result as in this process; single scans (the exact
// histograms, --scan-trace) come from the server only when asked for.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/ab/ab_runner.h"
#include "eval/ab/cache_groups.h"
#include "eval/ab/remote_session.h"
#include "eval/ab/testing/comparable_report.h"
#include "eval/report/perfetto_trace.h"
#include "eval/report/scan_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "perfetto/trace_subset.pb.h"
#include "policies/builtin_policies.h"
#include "tests/server_fixture.h"

namespace schedcache::ab {
namespace {

using schedcache::test_support::TestServer;
using schedcache::test_support::Transport;

class AbRemote : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PolicyRegistry> registry = BuildPolicyRegistry({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = std::make_unique<PolicyRegistry>(*std::move(registry));
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  SessionMaker Remote() {
    const std::string address = server_->server->addresses()[0];
    return [address](std::shared_ptr<const Topology>,
                     const client::SessionSpec& config, AbObserver& observer) {
      return MakeRemoteSession(address, config, observer);
    };
  }

  static AbOptions Redis() {
    AbOptions options;
    options.input.kind = AbInputSpec::Kind::kWorkload;
    options.input.workload = WorkloadKind::kRedis;
    options.workload.duration_ns = 100'000'000;
    return options;
  }

  // Both is one evaluation run in this process and on the server.
  struct Both {
    AbResult local;
    AbResult remote;
  };
  // RunBoth runs `options` both ways, or records why not (a failed run, or
  // a different number of policies) and returns nullopt.
  std::optional<Both> RunBoth(const AbOptions& options) {
    absl::StatusOr<AbResult> local =
        RunAb(options, *registry_, InProcessSessions(*registry_));
    absl::StatusOr<AbResult> remote = RunAb(options, *registry_, Remote());
    EXPECT_TRUE(local.ok()) << local.status();
    EXPECT_TRUE(remote.ok()) << remote.status();
    if (!local.ok() || !remote.ok()) return std::nullopt;
    EXPECT_EQ(remote->policies.size(), local->policies.size());
    if (remote->policies.size() != local->policies.size()) return std::nullopt;
    return Both{*std::move(local), *std::move(remote)};
  }

  std::unique_ptr<PolicyRegistry> registry_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(AbRemote, FeedingFromAThreadOfItsOwnGivesTheOneThreadResult) {
  AbOptions options = Redis();
  absl::StatusOr<AbResult> one = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(one.ok()) << one.status();
  options.jobs = 2;
  absl::StatusOr<AbResult> two = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_GT(one->input.samples, 0u);
  EXPECT_EQ(ComparableJson(*std::move(two)),
            ComparableJson(*std::move(one)));
}

TEST_F(AbRemote, GivesTheSameResultAsTheInProcessSession) {
  const std::optional<Both> both = RunBoth(Redis());
  ASSERT_TRUE(both.has_value());
  const AbResult* local = &both->local;
  const AbResult* remote = &both->remote;
  for (size_t i = 0; i < local->policies.size(); ++i) {
    const PolicyReport& l = local->policies[i].report;
    const PolicyReport& r = remote->policies[i].report;
    EXPECT_EQ(r.name, l.name);
    EXPECT_EQ(r.scans, l.scans) << l.name;
    EXPECT_EQ(r.cpus_scanned.p50, l.cpus_scanned.p50) << l.name;
    EXPECT_EQ(r.cpus_scanned.max, l.cpus_scanned.max) << l.name;
    EXPECT_EQ(r.agreements, l.agreements) << l.name;
    EXPECT_EQ(r.preferred_llc_changes, l.preferred_llc_changes) << l.name;
    // Without --scan-trace nobody wants single scans: none are streamed.
    EXPECT_TRUE(remote->policies[i].cpus_scanned_histogram.empty());
  }
  ASSERT_EQ(remote->processes.size(), local->processes.size());
  for (size_t i = 0; i < local->processes.size(); ++i) {
    EXPECT_EQ(remote->processes[i].tgid, local->processes[i].tgid);
    EXPECT_EQ(remote->processes[i].final_preferred_llc,
              local->processes[i].final_preferred_llc);
  }
  // The topology layout is the runner's own; the last scan's evidence a
  // remote run has only when it watches the scans (last_scans, below).
  EXPECT_EQ(remote->llcs.size(), local->llcs.size());
  EXPECT_NE(local->busiest_last_scan.tgid, 0);
  EXPECT_EQ(remote->busiest_last_scan.tgid, 0);
}

// With --group-by file:..., the server's report is the in-process one to
// the byte, the groups' runtime on each policy's preferred LLC included
// (it reaches the runner through GetReport's cache_groups): the file pairs
// the two busiest processes of the ungrouped run. What only a watched
// server session has (single scans: the histograms, the last scans) is
// left out of the local report first, as GivesTheSameResult... shows.
TEST_F(AbRemote, AGroupedRunGivesTheInProcessReportToTheByte) {
  absl::StatusOr<AbResult> plain =
      RunAb(Redis(), *registry_, InProcessSessions(*registry_));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_GE(plain->processes.size(), 2u);
  const std::string path = ::testing::TempDir() + "ab_remote_pair.txt";
  std::ofstream(path) << "pair " << plain->processes[0].tgid << "\npair "
                      << plain->processes[1].tgid << "\n";
  AbOptions options = Redis();
  options.group_by = *ParseGroupBy("file:" + path);
  std::optional<Both> both = RunBoth(options);
  ASSERT_TRUE(both.has_value());
  ASSERT_EQ(both->local.cache_groups.size(), 1u);
  const CacheGroupResult& pair = both->local.cache_groups[0];
  ASSERT_EQ(pair.runtime_on_preferred_llc_ns.size(),
            both->local.policies.size());
  EXPECT_GT(pair.runtime_on_preferred_llc_ns[0], 0);  // something to compare
  EXPECT_LE(pair.runtime_on_preferred_llc_ns[0], pair.runtime_ns);
  for (PolicyResult& policy : both->local.policies) {
    policy.cpus_scanned_histogram.clear();
  }
  both->local.busiest_last_scan = {};
  EXPECT_EQ(ComparableJson(std::move(both->remote)),
            ComparableJson(std::move(both->local)));
}

// Report statistics are one definition: GetReport (through a server) and
// the in-process engine give the same decisions, agreement (or none) and
// skip counts, whatever the reference: `none` (which decides at every
// trigger) or a disabled session (every trigger skipped, no agreement).
TEST_F(AbRemote, ReportStatisticsAreOneDefinitionWhateverTheReference) {
  struct Case {
    std::vector<std::string> policies;
    std::vector<std::string> settings;
  };
  const Case cases[] = {
      {{"none", "full-scan", "visited-scan"}, {}},
      {{"full-scan", "none"}, {"enable=off"}},
  };
  for (const Case& c : cases) {
    AbOptions options = Redis();
    options.session.policies = c.policies;
    options.session.settings = c.settings;
    const std::optional<Both> both = RunBoth(options);
    ASSERT_TRUE(both.has_value());
    for (size_t i = 0; i < both->local.policies.size(); ++i) {
      const PolicyReport& l = both->local.policies[i].report;
      const PolicyReport& r = both->remote.policies[i].report;
      EXPECT_EQ(r.decisions, l.decisions) << l.name;
      EXPECT_EQ(r.agreements, l.agreements) << l.name;
      EXPECT_EQ(r.agreement, l.agreement) << l.name;
      EXPECT_EQ(r.scans_skipped, l.scans_skipped) << l.name;
      EXPECT_EQ(r.scans_skipped_disabled, l.scans_skipped_disabled) << l.name;
    }
  }
}

TEST_F(AbRemote, ANoneReferenceDecidesAndADisabledSessionDoesNot) {
  AbOptions options = Redis();
  options.session.policies = {"none", "full-scan"};
  absl::StatusOr<AbResult> with_none = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(with_none.ok()) << with_none.status();
  const PolicyReport& none = with_none->policies[0].report;
  const PolicyReport& full = with_none->policies[1].report;
  // `none` never skips, so every trigger is a decision: at least every
  // trigger where full-scan executed, aborted or skipped.
  EXPECT_EQ(none.decisions, full.scans + full.scans_aborted + full.scans_skipped);
  EXPECT_GT(none.decisions, 0u);
  EXPECT_EQ(none.agreement, 1.0);
  options.session.settings = {"enable=off"};
  options.session.policies = {"full-scan", "none"};
  absl::StatusOr<AbResult> disabled = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(disabled.ok()) << disabled.status();
  const PolicyReport& off = disabled->policies[0].report;
  EXPECT_EQ(off.scans, 0u);
  EXPECT_GT(off.scans_skipped_disabled, 0u);
  EXPECT_EQ(off.scans_skipped, off.scans_skipped_disabled);
  EXPECT_EQ(off.decisions, 0u);
  EXPECT_FALSE(off.agreement.has_value());
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// --scan-trace through a server (WatchScans) writes the very files the
// in-process run writes: a trace line holds nothing that depends on scan
// time (comm, tid, CPU, sample time, CPUs scanned), and the server sends
// its scans in the order it ran them. One line per executed scan, so each
// file has the report's scan count of lines; with every scan heard, the
// remote run has the exact histograms too.
TEST_F(AbRemote, ScanTraceFromAServerIsTheInProcessTrace) {
  AbOptions options = Redis();
  // 1 s rather than 100 ms: over a hundred scans per cache-aware policy,
  // handed over across several of the remote session's deliveries.
  options.workload.duration_ns = 1'000'000'000;
  options.scan_trace = ::testing::TempDir() + "/local-scans.txt";
  absl::StatusOr<AbResult> local =
      RunAb(options, *registry_, InProcessSessions(*registry_));
  ASSERT_TRUE(local.ok()) << local.status();
  options.scan_trace = ::testing::TempDir() + "/remote-scans.txt";
  absl::StatusOr<AbResult> remote = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(remote.ok()) << remote.status();
  ASSERT_EQ(remote->policies.size(), local->policies.size());
  for (size_t i = 0; i < local->policies.size(); ++i) {
    const std::string& policy = options.session.policies[i];
    const std::string local_trace = ReadWhole(
        ScanTracePath(::testing::TempDir() + "/local-scans.txt", policy));
    const std::string remote_trace = ReadWhole(
        ScanTracePath(::testing::TempDir() + "/remote-scans.txt", policy));
    EXPECT_EQ(remote_trace, local_trace) << policy;
    const uint64_t lines =
        std::count(local_trace.begin(), local_trace.end(), '\n');
    const uint64_t header_lines = 6;  // scan_trace.cc's Header()
    EXPECT_EQ(lines - header_lines, local->policies[i].report.scans) << policy;
    EXPECT_EQ(remote->policies[i].cpus_scanned_histogram.size(),
              local->policies[i].cpus_scanned_histogram.size())
        << policy;
    const std::vector<HistogramBin>& local_bins =
        local->policies[i].cpus_scanned_histogram;
    const std::vector<HistogramBin>& remote_bins =
        remote->policies[i].cpus_scanned_histogram;
    for (size_t b = 0; b < local_bins.size() && b < remote_bins.size(); ++b) {
      const HistogramBin& l = local_bins[b];
      const HistogramBin& r = remote_bins[b];
      EXPECT_EQ(r.cpus_scanned, l.cpus_scanned) << policy;
      EXPECT_EQ(r.scans, l.scans) << policy;
    }
  }
  // The workload scans: full-scan and visited-scan have lines to compare.
  EXPECT_GT(local->policies[0].report.scans, 0u);
  EXPECT_GT(local->policies[1].report.scans, 0u);
}

// PerfettoView is what a Perfetto trace shows, whatever the order its
// packets were written in (Perfetto orders events by time): per track its
// descriptor and its events, sorted, each event without its scan_ns (the
// scan's wall time, each run's own) and without the sequence fields.
std::map<uint64_t, std::vector<std::string>> PerfettoView(
    const std::string& path) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(ReadWhole(path))) << path;
  std::map<uint64_t, std::vector<std::string>> view;
  for (const perfetto::TracePacket& packet : trace.packet()) {
    if (packet.has_track_descriptor()) {
      view[packet.track_descriptor().uuid()].push_back(
          "descriptor " + packet.track_descriptor().SerializeAsString());
      continue;
    }
    perfetto::TracePacket event = packet;
    event.clear_sequence_flags();
    event.clear_first_packet_on_sequence();
    for (perfetto::DebugAnnotation& annotation :
         *event.mutable_track_event()->mutable_debug_annotations()) {
      if (annotation.name() == "scan_ns") annotation.clear_int_value();
    }
    view[event.track_event().track_uuid()].push_back(event.SerializeAsString());
  }
  for (auto& [uuid, items] : view) std::sort(items.begin(), items.end());
  return view;
}

// --perfetto through a server shows what the in-process file shows: the
// same tracks with the same scans, preferred-LLC changes and occupancy at
// the same times (WatchScans carries each scan's per-LLC occupancy). The
// packets' order differs: a remote session hands scans over in batches
// and preference changes at the end.
TEST_F(AbRemote, PerfettoTraceFromAServerIsTheInProcessTrace) {
  AbOptions options = Redis();
  options.workload.duration_ns = 1'000'000'000;  // scans over several batches
  const std::string local_path = ::testing::TempDir() + "/local.pftrace";
  const std::string remote_path = ::testing::TempDir() + "/remote.pftrace";
  options.perfetto = local_path;
  absl::StatusOr<AbResult> local =
      RunAb(options, *registry_, InProcessSessions(*registry_));
  ASSERT_TRUE(local.ok()) << local.status();
  options.perfetto = remote_path;
  absl::StatusOr<AbResult> remote = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(remote.ok()) << remote.status();
  const std::map<uint64_t, std::vector<std::string>> local_view =
      PerfettoView(local_path);
  EXPECT_EQ(PerfettoView(remote_path), local_view);
  // Something to compare: the busiest process has occupancy tracks.
  ASSERT_FALSE(local->processes.empty());
  EXPECT_TRUE(local_view.count(OccupancyTrackUuid(local->processes[0].tgid, 0)))
      << "no LLC 0 occupancy track for tgid " << local->processes[0].tgid;
}

// With the HTML report asked for, a remote run watches its scans and its
// topology view has the in-process evidence.
TEST_F(AbRemote, LastScansFromAServerAreTheInProcessOnes) {
  AbOptions options = Redis();
  options.last_scans = true;
  const std::optional<Both> both = RunBoth(options);
  ASSERT_TRUE(both.has_value());
  const LastScanOccupancy& local = both->local.busiest_last_scan;
  const LastScanOccupancy& remote = both->remote.busiest_last_scan;
  EXPECT_NE(local.tgid, 0);
  EXPECT_EQ(remote.tgid, local.tgid);
  ASSERT_EQ(remote.per_policy.size(), local.per_policy.size());
  for (size_t i = 0; i < local.per_policy.size(); ++i) {
    ASSERT_EQ(remote.per_policy[i].size(), local.per_policy[i].size()) << i;
    for (size_t k = 0; k < local.per_policy[i].size(); ++k) {
      EXPECT_EQ(remote.per_policy[i][k].llc, local.per_policy[i][k].llc);
      EXPECT_EQ(remote.per_policy[i][k].occupancy,
                local.per_policy[i][k].occupancy);
    }
  }
}

TEST_F(AbRemote, UnknownPolicyIsTheServersInvalidArgument) {
  AbOptions options = Redis();
  options.input.kind = AbInputSpec::Kind::kCsv;  // no local reference engine
  options.input.path = "/nonexistent.csv";
  options.session.policies = {"full-scan", "fastest-scan"};
  absl::StatusOr<AbResult> result = RunAb(options, *registry_, Remote());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), ::testing::HasSubstr("fastest-scan"));
}

TEST_F(AbRemote, RowsTheServerRefusesAreRejectedWithTheirLines) {
  // The server refuses line 4 (nr_threads 0) when the stream ends; line 3
  // does not parse. Both are the input's malformed lines, named by line,
  // and lines 2 and 5 still count.
  const std::string path = ::testing::TempDir() + "/remote-refused.csv";
  std::ofstream(path)
      << "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
         "footprint_pages,comm\n"
         "4000000,0,10,10,3000000,1,2,,,app\n"
         "not,a,row\n"
         "6000000,1,10,11,5,1,0,,,app\n"
         "8000000,1,10,11,3000000,1,2,,,app\n";
  AbOptions options;
  options.input.kind = AbInputSpec::Kind::kCsv;
  options.input.path = path;
  options.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  absl::StatusOr<AbResult> result = RunAb(options, *registry_, Remote());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->input.samples, 2u);
  EXPECT_EQ(result->input.malformed_lines, 2u);
  ASSERT_EQ(result->input.malformed_examples.size(), 2u);
  EXPECT_THAT(result->input.malformed_examples[0],
              ::testing::StartsWith("line 3: expected 10 columns"));
  EXPECT_EQ(result->input.malformed_examples[1],
            "line 4: nr_threads 0 must be >= 1");
}

}  // namespace
}  // namespace schedcache::ab
