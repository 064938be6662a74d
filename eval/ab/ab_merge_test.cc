#include "eval/ab/ab_merge.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Part is one input's result with one policy; the numbers are chosen so
// each merged value below is easy to derive by hand.
AbResult Part(const std::string& description, int64_t start_ns,
              std::vector<HistogramBin> histogram, Distribution cpus,
              Distribution llcs, uint64_t decisions, uint64_t agreements,
              double on_preferred, int64_t runtime_ns) {
  AbResult r;
  r.input.description = description;
  r.input.topology = "1 package, 2 LLCs, 8 CPUs";
  r.input.topology_source = "synthetic:x";
  r.input.samples = 100;
  r.input.handovers = 10;
  r.input.malformed_lines = 1;
  r.input.malformed_examples = {"line 3: junk"};
  r.input.start_ns = start_ns;
  r.input.duration_ns = 1000;
  r.input.hz = 250;
  PolicyResult& p = r.policies.emplace_back();
  p.report.name = "visited-scan";
  p.report.scans = cpus.count;
  p.report.cpus_scanned = cpus;
  p.report.llcs_scanned = llcs;
  p.report.scan_ns = {cpus.count, 100.0, 90, 200, 300};
  p.report.decisions = decisions;
  p.report.agreements = agreements;
  p.report.runtime_on_preferred_llc = on_preferred;
  p.cpus_scanned_histogram = std::move(histogram);
  r.processes.push_back({7, description, runtime_ns, {0}, {{{start_ns, 0}}}, {}});
  return r;
}

std::vector<AbResult> TwoParts() {
  // a: 3 scans of 2 CPUs; b: 1 scan of 2 CPUs and 4 of 8.
  return {Part("a", 500, {{2, 3}}, {3, 2.0, 2, 2, 2}, {3, 1.0, 1, 1, 1}, 4, 3,
               0.5, 300),
          Part("b", 200, {{2, 1}, {8, 4}}, {5, 6.8, 8, 8, 8}, {5, 1.8, 2, 2, 2},
               6, 6, 1.0, 100)};
}

TEST(MergeAbResults, AddsCountsAndRebuildsCpusScannedFromTheHistograms) {
  absl::StatusOr<AbResult> merged = MergeAbResults(TwoParts());
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->input.description, "2 inputs: a; b");
  EXPECT_EQ(merged->input.samples, 200u);
  EXPECT_EQ(merged->input.malformed_lines, 2u);
  EXPECT_THAT(merged->input.malformed_examples,
              ElementsAre("a: line 3: junk", "b: line 3: junk"));
  EXPECT_EQ(merged->input.start_ns, 200);      // the earliest
  EXPECT_EQ(merged->input.duration_ns, 2000);  // summed
  const PolicyResult& p = merged->policies.at(0);
  EXPECT_EQ(p.report.scans, 8u);
  // Bins {2: 4, 8: 4}: mean (8 + 32) / 8 = 5; rank of p50 = 4 -> 2 CPUs;
  // p99 rank ceil(7.92) = 8 -> 8 CPUs; max 8.
  EXPECT_THAT(
      p.cpus_scanned_histogram,
      ElementsAre(::testing::FieldsAre(2, 4u), ::testing::FieldsAre(8, 4u)));
  EXPECT_EQ(p.report.cpus_scanned.count, 8u);
  EXPECT_DOUBLE_EQ(p.report.cpus_scanned.mean, 5.0);
  EXPECT_EQ(p.report.cpus_scanned.p50, 2);
  EXPECT_EQ(p.report.cpus_scanned.p99, 8);
  EXPECT_EQ(p.report.cpus_scanned.max, 8);
  // LLCs have no histogram: mean (3 * 1 + 5 * 1.8) / 8 = 1.5, percentiles
  // the larger of the parts' (an upper bound).
  EXPECT_DOUBLE_EQ(p.report.llcs_scanned.mean, 1.5);
  EXPECT_EQ(p.report.llcs_scanned.p50, 2);
  // Agreement 9 of 10 decisions; on-preferred share weighted by runtime:
  // (0.5 * 300 + 1.0 * 100) / 400 = 0.625.
  ASSERT_TRUE(p.report.agreement.has_value());
  EXPECT_DOUBLE_EQ(*p.report.agreement, 0.9);
  EXPECT_DOUBLE_EQ(p.report.runtime_on_preferred_llc, 0.625);
}

TEST(MergeAbResults, ListsEveryInputsProcessesBusiestFirst) {
  absl::StatusOr<AbResult> merged = MergeAbResults(TwoParts());
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->processes.size(), 2u);
  EXPECT_EQ(merged->processes[0].comm, "a");  // 300 ns before b's 100
  EXPECT_EQ(merged->processes[1].comm, "b");
}

TEST(MergeAbResults, WithoutHistogramsCpusScannedPercentilesAreBounds) {
  std::vector<AbResult> parts = TwoParts();
  for (AbResult& part : parts) part.policies[0].cpus_scanned_histogram.clear();
  absl::StatusOr<AbResult> merged = MergeAbResults(std::move(parts));
  ASSERT_TRUE(merged.ok()) << merged.status();
  const Distribution& d = merged->policies[0].report.cpus_scanned;
  // mean (3 * 2 + 5 * 6.8) / 8 = 5; p50 max(2, 8) = 8, not the exact 2.
  EXPECT_DOUBLE_EQ(d.mean, 5.0);
  EXPECT_EQ(d.p50, 8);
}

TEST(MergeAbResults, RefusesPartsWithOtherPoliciesNamingBoth) {
  std::vector<AbResult> parts = TwoParts();
  parts[1].policies[0].report.name = "full-scan";
  absl::StatusOr<AbResult> merged = MergeAbResults(std::move(parts));
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(),
              HasSubstr("input b: policies is \"full-scan\", the first "
                        "input's is \"visited-scan\""));
}

TEST(MergeAbResults, RefusesNothingToMerge) {
  EXPECT_TRUE(absl::IsInvalidArgument(MergeAbResults({}).status()));
}

}  // namespace
}  // namespace schedcache::ab
