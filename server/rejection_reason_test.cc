// Every error the engine and the batch decoder reject an event with maps to
// its named reason, not to "other": the errors are made by the real code,
// so a reworded message that no longer starts with its field fails here.
#include "server/rejection_reason.h"

#include <memory>
#include <type_traits>
#include <vector>

#include "api/proto_convert.h"
#include "gtest/gtest.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::MakeGrid;
using test_support::SampleAt;

constexpr int64_t kSecond = 1'000'000'000;

// Rejection is the engine's error for `sample` (applied after a valid
// sample at t = 100 on CPU 0).
absl::Status Rejection(const Sample& sample) {
  std::unique_ptr<Engine> engine =
      test_support::MustMakeEngine(MakeGrid({1, 2, 4}), {}, {"full-scan"});
  if (engine == nullptr) return absl::InternalError("no engine");
  if (!engine->ApplySample(SampleAt(100, 0, 1, 1, 10, false)).ok()) {
    return absl::InternalError("the valid sample was rejected");
  }
  return engine->ApplySample(sample);
}

RejectionReason ReasonOf(const Sample& sample) {
  const absl::Status error = Rejection(sample);
  EXPECT_FALSE(error.ok());
  return RejectionReasonOf(error);
}

TEST(RejectionReasonOf, EachEngineErrorHasItsReason) {
  EXPECT_EQ(ReasonOf(SampleAt(200, 99, 1, 1, 10, false)),
            RejectionReason::kCpu);  // no CPU 99 in 8 CPUs
  EXPECT_EQ(ReasonOf(SampleAt(99, 0, 1, 1, 10, false)),
            RejectionReason::kTimestamp);  // before CPU 0's 100
  EXPECT_EQ(ReasonOf(SampleAt(-1, 1, 1, 1, 10, false)),
            RejectionReason::kTimestamp);  // out of range
  // 2 h ahead of the clock; max_clock_jump_ns defaults to 1 h.
  EXPECT_EQ(ReasonOf(SampleAt(7200 * kSecond, 1, 1, 1, 10, false)),
            RejectionReason::kTimestamp);
  EXPECT_EQ(ReasonOf(SampleAt(200, 0, 0, 1, 10, false)),
            RejectionReason::kIds);  // tgid 0
  EXPECT_EQ(ReasonOf(SampleAt(200, 0, 1, -3, 10, false)),
            RejectionReason::kIds);  // tid -3
  EXPECT_EQ(ReasonOf(SampleAt(200, 0, 1, 1, -10, false)),
            RejectionReason::kField);  // delta_ns
  EXPECT_EQ(ReasonOf(SampleAt(200, 0, 1, 1, 10, false, 0)),
            RejectionReason::kField);  // nr_threads 0
  Sample bad_node = SampleAt(200, 0, 1, 1, 10, false);
  bad_node.numa_node = 7;
  EXPECT_EQ(ReasonOf(bad_node), RejectionReason::kField);
  Sample bad_footprint = SampleAt(200, 0, 1, 1, 10, false);
  bad_footprint.footprint_pages = -2;
  EXPECT_EQ(ReasonOf(bad_footprint), RejectionReason::kField);
}

TEST(RejectionReasonOf, AKernelDecisionsPreferredCpuIsAFieldError) {
  std::unique_ptr<Engine> engine =
      test_support::MustMakeEngine(MakeGrid({1, 2, 4}), {}, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  KernelDecision decision;
  decision.tgid = 1;
  decision.tid = 1;
  decision.preferred_cpu = 8;  // CPUs 0-7
  const absl::Status error = engine->ApplyKernelDecision(decision);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(RejectionReasonOf(error), RejectionReason::kField);
}

TEST(RejectionReasonOf, HalfIdleHandOverIsAnIdsError) {
  std::unique_ptr<Engine> engine =
      test_support::MustMakeEngine(MakeGrid({1, 2, 4}), {}, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  const absl::Status error = engine->ApplyHandOver(HandOver{0, 0, 5, 0});
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(RejectionReasonOf(error), RejectionReason::kIds);
}

TEST(RejectionReasonOf, UnknownKindRowIsAKindError) {
  v1::IngestBatch batch;
  v1::EventColumns& columns = *batch.mutable_columns();
  columns.add_timestamp_delta_ns(1);
  columns.add_kind(static_cast<v1::EventKind>(7));
  columns.add_cpu(0);
  columns.add_tgid(1);
  columns.add_tid(1);
  columns.add_delta_ns(0);
  std::vector<absl::Status> reasons;
  ForEachBatchEvent(batch, [&reasons](const auto& event) {
    if constexpr (std::is_same_v<std::decay_t<decltype(event)>,
                                 UnreadableRow>) {
      reasons.push_back(event.reason);
    }
  });
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(RejectionReasonOf(reasons[0]), RejectionReason::kKind);
}

TEST(RejectionReasonOf, AnUnknownMessageIsOther) {
  EXPECT_EQ(RejectionReasonOf(absl::InvalidArgumentError("cpus 3 ...")),
            RejectionReason::kOther);
  EXPECT_EQ(RejectionReasonOf(absl::InvalidArgumentError("")),
            RejectionReason::kOther);
}

TEST(RejectionReasonName, NamesAreDistinctLabelValues) {
  EXPECT_EQ(RejectionReasonName(RejectionReason::kKind), "kind");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kCpu), "cpu");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kTimestamp), "timestamp");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kIds), "ids");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kField), "field");
  EXPECT_EQ(RejectionReasonName(RejectionReason::kOther), "other");
}

}  // namespace
}  // namespace schedcache
