#include "eval/ab/ab_collector.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "perfetto/trace_subset.pb.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;

Sample Ran(int32_t tgid, int32_t tid, int64_t delta_ns, std::string comm) {
  Sample s;
  s.tgid = tgid;
  s.tid = tid;
  s.delta_ns = delta_ns;
  s.comm = Comm(comm);
  return s;
}

ScanObservation Scan(int policy, int cpus) {
  return ScanObservation{policy, 1, 1, 0, 0, cpus, "p"};
}

EngineReport TwoPolicies() {
  EngineReport report;
  report.policies.resize(2);
  report.policies[0].name = "a";
  report.policies[1].name = "b";
  return report;
}

::testing::Matcher<const HistogramBin&> Bin(int64_t cpus, uint64_t scans) {
  return ::testing::AllOf(
      ::testing::Field(&HistogramBin::cpus_scanned, cpus),
      ::testing::Field(&HistogramBin::scans, scans));
}

// ScanOf is an executed scan of `policy` for process `tgid` that saw
// `occupancy` (which must outlive the call).
ScanObservation ScanOf(int policy, int32_t tgid,
                       const std::vector<LlcOccupancy>& occupancy) {
  ScanObservation scan = Scan(policy, 2);
  scan.tgid = tgid;
  scan.llc_occupancy = occupancy;
  return scan;
}

// tgid 7 ran 30 ns against tgid 5's 20: the busiest. Policy a scanned it
// twice (the second scan's occupancy is the evidence), b once; b's scan of
// 5 is not 7's evidence.
TEST(AbCollector, KeepsTheBusiestProcesssLastScanPerPolicy) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  collector.OnSample(Ran(5, 5, 20, "small"));
  collector.OnSample(Ran(7, 7, 30, "big"));
  const std::vector<LlcOccupancy> first = {{0, 100}, {1, 50}};
  const std::vector<LlcOccupancy> second = {{0, 100}, {1, 200}};
  const std::vector<LlcOccupancy> by_b = {{1, 300}};
  const std::vector<LlcOccupancy> of_small = {{0, 999}};
  collector.OnScan(ScanOf(0, 7, first));
  collector.OnScan(ScanOf(1, 7, by_b));
  collector.OnScan(ScanOf(0, 7, second));
  collector.OnScan(ScanOf(1, 5, of_small));
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  EXPECT_EQ(result.busiest_last_scan.tgid, 7);
  ASSERT_EQ(result.busiest_last_scan.per_policy.size(), 2u);
  ASSERT_EQ(result.busiest_last_scan.per_policy[0].size(), 2u);
  EXPECT_EQ(result.busiest_last_scan.per_policy[0][1].occupancy, 200u);
  ASSERT_EQ(result.busiest_last_scan.per_policy[1].size(), 1u);
  EXPECT_EQ(result.busiest_last_scan.per_policy[1][0].llc, 1);
  EXPECT_EQ(result.busiest_last_scan.per_policy[1][0].occupancy, 300u);
}

// Scans without occupancy (a server's scan stream) or none at all give no
// evidence: the view says it is not known rather than shade nothing.
TEST(AbCollector, LeavesTheLastScanOutWithoutOccupancy) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  collector.OnSample(Ran(7, 7, 30, "big"));
  EXPECT_EQ(collector.Build(TwoPolicies(), AbInput{}, true).busiest_last_scan.tgid, 0);
  collector.OnScan(ScanOf(1, 7, {}));
  EXPECT_EQ(collector.Build(TwoPolicies(), AbInput{}, true).busiest_last_scan.tgid, 0);
  const std::vector<LlcOccupancy> occupancy = {{0, 100}};
  collector.OnScan(ScanOf(0, 7, occupancy));
  EXPECT_EQ(collector.Build(TwoPolicies(), AbInput{}, true).busiest_last_scan.tgid, 7);
}

// A server streams its scans only to an observer that wants them: the
// histograms alone are not worth it, the last scans (--html) are.
TEST(AbCollector, WantsEveryScanOnlyForTracesOrTheLastScans) {
  EXPECT_FALSE(AbCollector({"a"}, 8, nullptr, nullptr).wants_scans());
  EXPECT_TRUE(AbCollector({"a"}, 8, nullptr, nullptr, /*wants_last_scans=*/true)
                  .wants_scans());
}

TEST(AbCollector, CountsCpusScannedPerPolicyAndClampsAtTheBound) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  collector.OnScan(Scan(0, 8));
  collector.OnScan(Scan(0, 8));
  collector.OnScan(Scan(1, 2));
  collector.OnScan(Scan(1, 50));  // beyond the bound: counted at 8
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  EXPECT_THAT(result.policies[0].cpus_scanned_histogram,
              ElementsAre(Bin(8, 2)));
  EXPECT_THAT(result.policies[1].cpus_scanned_histogram,
              ElementsAre(Bin(2, 1), Bin(8, 1)));
  const AbResult without = collector.Build(TwoPolicies(), AbInput{}, false);
  EXPECT_TRUE(without.policies[0].cpus_scanned_histogram.empty());
}

// A server streams scans only to an observer that wants them: the
// collector does when it writes a scan trace, not for its histograms.
TEST(AbCollector, WantsScansOnlyWhenItWritesAScanTrace) {
  EXPECT_FALSE(AbCollector({"a"}, 8, nullptr, nullptr).wants_scans());
  absl::StatusOr<ScanTraceWriter> trace =
      ScanTraceWriter::Open(::testing::TempDir() + "/wants.txt", {"a"});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(AbCollector({"a"}, 8, &*trace, nullptr).wants_scans());
}

TEST(AbCollector, NamesAProcessAfterItsMainThread) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  collector.OnSample(Ran(7, 9, 10, "worker"));
  collector.OnSample(Ran(7, 7, 10, "server"));
  collector.OnSample(Ran(7, 8, 10, "io"));
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  ASSERT_EQ(result.processes.size(), 1u);
  EXPECT_EQ(result.processes[0].comm, "server");
  EXPECT_EQ(result.processes[0].runtime_ns, 30);
}

TEST(AbCollector, KeepsFinalLlcsForAllAndTimelinesForTheBusiest) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  const int n = kMaxTimelines + 2;
  for (int tgid = 1; tgid <= n; ++tgid) {
    collector.OnSample(Ran(tgid, tgid, 100 * tgid, "p"));
    collector.OnPreferenceChange(PreferenceChange{
        .tgid = tgid, .policy = "b", .new_llc = 3, .timestamp_ns = 5});
  }
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  ASSERT_EQ(result.processes.size(), static_cast<size_t>(n));
  for (int rank = 0; rank < n; ++rank) {
    const ProcessResult& p = result.processes[rank];
    EXPECT_EQ(p.tgid, n - rank);  // busiest first
    EXPECT_THAT(p.final_preferred_llc, ElementsAre(kNoPreferredLlc, 3));
    if (rank < kMaxTimelines) {
      ASSERT_EQ(p.preferred_llc_over_time.size(), 2u);
      EXPECT_TRUE(p.preferred_llc_over_time[0].empty());
      ASSERT_EQ(p.preferred_llc_over_time[1].size(), 1u);
      EXPECT_EQ(p.preferred_llc_over_time[1][0].timestamp_ns, 5);
    } else {
      EXPECT_TRUE(p.preferred_llc_over_time.empty());
    }
  }
}

TEST(AbCollector, CapsEachTimelineAndCountsWhatItDrops) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  const int changes = static_cast<int>(kMaxChangesPerTimeline) + 3;
  for (int i = 0; i < changes; ++i) {
    collector.OnPreferenceChange(PreferenceChange{
        .tgid = 1, .policy = "a", .new_llc = i % 2, .timestamp_ns = i});
  }
  EXPECT_EQ(collector.dropped_changes(), 3u);
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  EXPECT_EQ(result.processes[0].preferred_llc_over_time[0].size(),
            kMaxChangesPerTimeline);
  // The final value is still the last one, dropped or not.
  EXPECT_EQ(result.processes[0].final_preferred_llc[0], (changes - 1) % 2);
}

// ReadTrace reads a --perfetto file back: the tgids with occupancy tracks,
// and the name of each process track.
struct TraceContents {
  absl::flat_hash_set<int32_t> with_occupancy;
  absl::flat_hash_map<int32_t, std::string> names;
};

TraceContents ReadTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromIstream(&in)) << path;
  TraceContents contents;
  for (const perfetto::TracePacket& packet : trace.packet()) {
    const perfetto::TrackDescriptor& track = packet.track_descriptor();
    if (track.has_process()) {
      contents.names[track.process().pid()] = track.process().process_name();
    }
    if (absl::EndsWith(track.name(), " occupancy")) {
      contents.with_occupancy.insert(
          static_cast<int32_t>(track.parent_uuid() >> 32));
    }
  }
  return contents;
}

TEST(AbCollector, StreamsOccupancyOfTheBusiestSoFarToPerfetto) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/busiest.pftrace");
  absl::StatusOr<PerfettoTraceWriter> writer =
      PerfettoTraceWriter::Open(path, {"a", "b"});
  ASSERT_TRUE(writer.ok()) << writer.status();
  AbCollector collector({"a", "b"}, 8, nullptr, &*writer);
  const std::vector<LlcOccupancy> occupancy = {{0, 7}};
  auto scan_of = [&](int32_t tgid, int policy) {
    ScanObservation scan = Scan(policy, 2);
    scan.tgid = tgid;
    scan.timestamp_ns = 10;
    scan.llc_occupancy = occupancy;
    return scan;
  };
  // Process t ran 100 * t ns: with 8 of them, 3..8 are the 6 busiest.
  const int n = kMaxTimelines + 2;
  for (int32_t tgid = 1; tgid <= n; ++tgid) {
    collector.OnSample(Ran(tgid, tgid, 100 * tgid, absl::StrCat("p", tgid)));
  }
  for (int32_t tgid = 1; tgid <= n; ++tgid) {
    collector.OnScan(scan_of(tgid, 0));
    collector.OnScan(scan_of(tgid, 1));  // not the reference: no occupancy
  }
  // Process 1 now passes the least busy (3, 300 ns) and takes its place;
  // 2 never scanned while among them.
  collector.OnSample(Ran(1, 1, 250, "p1"));
  collector.OnScan(scan_of(1, 0));
  collector.OnSample(Ran(n + 1, n + 1, 1, "quiet"));  // no event at all
  collector.FinishPerfetto();
  ASSERT_TRUE(collector.status().ok()) << collector.status();
  ASSERT_TRUE(writer->Close().ok());

  const TraceContents trace = ReadTrace(path);
  EXPECT_THAT(trace.with_occupancy,
              ::testing::UnorderedElementsAre(1, 3, 4, 5, 6, 7, 8));
  EXPECT_EQ(trace.names.size(), static_cast<size_t>(n + 1));
  EXPECT_EQ(trace.names.at(3), "p3");
  EXPECT_EQ(trace.names.at(n + 1), "quiet");
}

TEST(AbCollector, RuntimeSumsSaturateAtInt64Max) {
  // Two CSV samples of 2^62 ns each would sum to 2^63, one past INT64_MAX.
  AbCollector collector({"a"}, 8, nullptr, nullptr);
  collector.OnSample(Ran(7, 7, int64_t{1} << 62, "big"));
  collector.OnSample(Ran(7, 7, int64_t{1} << 62, "big"));
  collector.OnSample(Ran(7, 7, 5, "big"));
  const AbResult result = collector.Build(EngineReport{}, AbInput{}, false);
  ASSERT_EQ(result.processes.size(), 1u);
  EXPECT_EQ(result.processes[0].runtime_ns, INT64_MAX);
}

// Cache groups (docs/MODEL.md, Cache groups), by hand:
//   10 ran 100 ns in group 7, 20 ran 50 ns in 7, 30 ran 10 ns in its own
//   group, then 10 ran 5 ns in group 8.
// Group 7: members 10, 20 (in order of first sample), 150 ns; at the end
// only 20 is still in it, and 20 prefers LLC 1 under "a" (none under "b").
// Group 8: member 10, 5 ns, no preference. 30 is in no named group.
// Busiest first: 7, then 8; named "pair" and "solo" (ids 7 and 8 are
// names[6] and names[7]).
TEST(AbCollector, ListsEachNamedGroupWithItsMembersRuntimeAndPreference) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  auto ran_in = [&](int32_t tgid, int64_t delta, uint64_t group) {
    Sample s = Ran(tgid, tgid, delta, "p");
    s.cache_group = group;
    collector.OnSample(s);
  };
  ran_in(10, 100, 7);
  ran_in(20, 50, 7);
  ran_in(30, 10, 0);
  collector.OnPreferenceChange(PreferenceChange{
      .tgid = 20, .policy = "a", .new_llc = 1, .cache_group = 7});
  collector.OnPreferenceChange(PreferenceChange{
      .tgid = 10, .policy = "a", .new_llc = 1, .cache_group = 7});
  ran_in(10, 5, 8);
  collector.OnPreferenceChange(PreferenceChange{
      .tgid = 10, .policy = "a", .new_llc = -1, .cache_group = 8});
  collector.NameGroups({"", "", "", "", "", "", "pair", "solo"});
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  ASSERT_EQ(result.cache_groups.size(), 2u);
  const CacheGroupResult& pair = result.cache_groups[0];
  EXPECT_EQ(pair.id, 7u);
  EXPECT_EQ(pair.name, "pair");
  EXPECT_THAT(pair.member_tgids, ElementsAre(10, 20));
  EXPECT_EQ(pair.runtime_ns, 150);
  EXPECT_THAT(pair.final_preferred_llc, ElementsAre(1, kNoPreferredLlc));
  const CacheGroupResult& solo = result.cache_groups[1];
  EXPECT_EQ(solo.id, 8u);
  EXPECT_EQ(solo.name, "solo");
  EXPECT_THAT(solo.member_tgids, ElementsAre(10));
  EXPECT_EQ(solo.runtime_ns, 5);
  EXPECT_THAT(solo.final_preferred_llc,
              ElementsAre(kNoPreferredLlc, kNoPreferredLlc));
}

// Without a sample naming a group, the result lists none.
TEST(AbCollector, ListsNoGroupWhenEveryProcessIsItsOwn) {
  AbCollector collector({"a", "b"}, 8, nullptr, nullptr);
  collector.OnSample(Ran(1, 1, 10, "p"));
  EXPECT_TRUE(collector.Build(TwoPolicies(), AbInput{}, true)
                  .cache_groups.empty());
}

}  // namespace
}  // namespace schedcache::ab
