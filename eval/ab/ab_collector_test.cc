#include "eval/ab/ab_collector.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

TEST(AbCollector, CountsCpusScannedPerPolicyAndClampsAtTheBound) {
  AbCollector collector({"a", "b"}, 8, nullptr);
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
  EXPECT_FALSE(AbCollector({"a"}, 8, nullptr).wants_scans());
  absl::StatusOr<ScanTraceWriter> trace =
      ScanTraceWriter::Open(::testing::TempDir() + "/wants.txt", {"a"});
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(AbCollector({"a"}, 8, &*trace).wants_scans());
}

TEST(AbCollector, NamesAProcessAfterItsMainThread) {
  AbCollector collector({"a", "b"}, 8, nullptr);
  collector.OnSample(Ran(7, 9, 10, "worker"));
  collector.OnSample(Ran(7, 7, 10, "server"));
  collector.OnSample(Ran(7, 8, 10, "io"));
  const AbResult result = collector.Build(TwoPolicies(), AbInput{}, true);
  ASSERT_EQ(result.processes.size(), 1u);
  EXPECT_EQ(result.processes[0].comm, "server");
  EXPECT_EQ(result.processes[0].runtime_ns, 30);
}

TEST(AbCollector, KeepsFinalLlcsForAllAndTimelinesForTheBusiest) {
  AbCollector collector({"a", "b"}, 8, nullptr);
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
  AbCollector collector({"a", "b"}, 8, nullptr);
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

TEST(AbCollector, RuntimeSumsSaturateAtInt64Max) {
  // Two CSV samples of 2^62 ns each would sum to 2^63, one past INT64_MAX.
  AbCollector collector({"a"}, 8, nullptr);
  collector.OnSample(Ran(7, 7, int64_t{1} << 62, "big"));
  collector.OnSample(Ran(7, 7, int64_t{1} << 62, "big"));
  collector.OnSample(Ran(7, 7, 5, "big"));
  const AbResult result = collector.Build(EngineReport{}, AbInput{}, false);
  ASSERT_EQ(result.processes.size(), 1u);
  EXPECT_EQ(result.processes[0].runtime_ns, INT64_MAX);
}

}  // namespace
}  // namespace schedcache::ab
