// ChangeToProto/ChangeFromProto and ScanToProto/ScanFromProto: what a
// watch streams comes back as the engine reported it, so `ab --server`
// collects the same changes and scans an in-process run does. Each field
// holds a value of its own, so a field read into another's place, or
// dropped, fails the comparison.
#include <string>
#include <vector>

#include "api/proto_convert.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(ChangeFromProto, BringsBackEveryFieldOfChangeToProto) {
  const std::string policy = "visited-scan";
  const PreferenceChange sent{.tgid = 4242,
                              .policy = policy,
                              .old_llc = 3,
                              .new_llc = -1,
                              .new_cpu = 17,
                              .reason = NoPreferenceReason::kTimedOut,
                              .timestamp_ns = 9'007'199'254'740'993,
                              .cache_group = 0xfeed'0000'0000'0001};
  const v1::PreferenceChange wire = ChangeToProto(sent);
  const PreferenceChange back = ChangeFromProto(wire);
  EXPECT_EQ(back.tgid, 4242);
  EXPECT_EQ(back.policy, "visited-scan");
  EXPECT_EQ(back.old_llc, 3);
  EXPECT_EQ(back.new_llc, -1);
  EXPECT_EQ(back.new_cpu, 17);
  EXPECT_EQ(back.reason, NoPreferenceReason::kTimedOut);
  EXPECT_EQ(back.timestamp_ns, 9'007'199'254'740'993);
  EXPECT_EQ(back.cache_group, 0xfeed'0000'0000'0001u);
}

// Every reason maps to a value of its own and back, kKernelNone (the last)
// included; a number the enum does not name reads as kNoData.
TEST(ChangeFromProto, BringsBackEveryReasonAndReadsAnUnknownOneAsNoData) {
  for (int i = 0; i <= static_cast<int>(NoPreferenceReason::kKernelNone);
       ++i) {
    const auto reason = static_cast<NoPreferenceReason>(i);
    PreferenceChange change;
    change.reason = reason;
    const PreferenceChange back = ChangeFromProto(ChangeToProto(change));
    EXPECT_EQ(back.reason, reason) << "reason " << i;
  }
  v1::PreferenceChange unknown;
  unknown.set_reason(static_cast<v1::NoPreferenceReason>(99));
  EXPECT_EQ(ChangeFromProto(unknown).reason, NoPreferenceReason::kNoData);
}

TEST(ScanFromProto, BringsBackEveryFieldOfScanToProtoWithThePolicyIndex) {
  const std::vector<LlcOccupancy> llcs = {{2, 1048576}, {0, 524288}};
  const ScanObservation sent{.policy = 1,
                             .tgid = 100,
                             .tid = 101,
                             .cpu = 7,
                             .timestamp_ns = 123'456'789,
                             .cpus_scanned = 16,
                             .comm = "redis-server",
                             .llcs_scanned = 2,
                             .scan_ns = 640,
                             .preferred_llc = 2,
                             .llc_occupancy = llcs};
  const v1::ScanEvent wire = ScanToProto(sent, "visited-scan");
  // Storage left from an earlier scan is replaced, not appended to.
  std::vector<LlcOccupancy> storage = {{9, 9}, {9, 9}, {9, 9}};
  const ScanObservation back = ScanFromProto(wire, 1, storage);
  EXPECT_EQ(back.policy, 1);
  EXPECT_EQ(back.tgid, 100);
  EXPECT_EQ(back.tid, 101);
  EXPECT_EQ(back.cpu, 7);
  EXPECT_EQ(back.timestamp_ns, 123'456'789);
  EXPECT_EQ(back.cpus_scanned, 16);
  EXPECT_EQ(back.comm, "redis-server");
  EXPECT_EQ(back.llcs_scanned, 2);
  EXPECT_EQ(back.scan_ns, 640);
  EXPECT_EQ(back.preferred_llc, 2);
  ASSERT_EQ(back.llc_occupancy.size(), 2u);
  EXPECT_EQ(back.llc_occupancy.data(), storage.data());
  EXPECT_EQ(back.llc_occupancy[0].llc, 2);
  EXPECT_EQ(back.llc_occupancy[0].occupancy, 1048576u);
  EXPECT_EQ(back.llc_occupancy[1].llc, 0);
  EXPECT_EQ(back.llc_occupancy[1].occupancy, 524288u);
}

}  // namespace
}  // namespace schedcache
