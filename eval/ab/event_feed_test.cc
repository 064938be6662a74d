#include "eval/ab/event_feed.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;

// ScriptedSession refuses the samples whose tid is in `refused` (as an
// in-process engine would, with InvalidArgument) and reports `deferred`
// from Finish (as a server would); it counts what it applied.
class ScriptedSession : public AbSession {
 public:
  absl::Status OnSample(const Sample& sample) override {
    for (int32_t tid : refused) {
      if (sample.tid == tid) {
        return absl::InvalidArgumentError("tid " + std::to_string(tid) +
                                          " refused");
      }
    }
    ++applied_samples_;
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver&) override {
    ++applied_hand_overs_;
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit&) override {
    return absl::OkStatus();
  }
  absl::StatusOr<SessionOutcome> Finish() override {
    SessionOutcome outcome = deferred;
    outcome.report.samples_applied = applied_samples_;
    outcome.report.handovers_applied = applied_hand_overs_;
    return outcome;
  }
  bool reports_scans() const override { return false; }
  bool enabled() const override { return true; }

  std::vector<int32_t> refused;
  SessionOutcome deferred;

 private:
  uint64_t applied_samples_ = 0;
  uint64_t applied_hand_overs_ = 0;
};

Sample At(int64_t timestamp_ns, int32_t tid, int64_t delta_ns = 10) {
  Sample s;
  s.timestamp_ns = timestamp_ns;
  s.tgid = 1;
  s.tid = tid;
  s.delta_ns = delta_ns;
  return s;
}

// EventFeedTest runs each case with the session on the feeding thread
// (jobs 1) and on a thread of its own (jobs 2): the outcome is the same.
class EventFeedTest : public ::testing::TestWithParam<int> {
 protected:
  AbCollector collector_{{"p"}, 4, nullptr, nullptr};
  ScriptedSession session_;
  std::function<void(const AbProgress&)> no_progress_;
  InputProblems problems_;
};

TEST_P(EventFeedTest, RefusedEventsAreTheInputsProblemsNamedByLine) {
  session_.refused = {7};
  EventFeed feed(collector_, nullptr, session_, no_progress_, &problems_,
                 GetParam());
  feed.OnInputLine(2);
  ASSERT_TRUE(feed.OnSample(At(100, 5)).ok());
  feed.OnInputLine(3);
  ASSERT_TRUE(feed.OnSample(At(200, 7, 1'000'000)).ok());  // refused
  feed.OnInputLine(4);
  ASSERT_TRUE(feed.OnHandOver(HandOver{300, 0, 1, 5}).ok());
  AbInput input;
  absl::StatusOr<EngineReport> report = feed.Finish(input);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(input.samples, 1u);
  EXPECT_EQ(input.handovers, 1u);
  EXPECT_EQ(input.malformed_lines, 1u);
  EXPECT_THAT(input.malformed_examples, ElementsAre("line 3: tid 7 refused"));
  // The refused sample's runtime is not charged, nor its time spanned.
  const AbResult result = collector_.Build(*report, input, false);
  ASSERT_EQ(result.processes.size(), 1u);
  EXPECT_EQ(result.processes[0].runtime_ns, 10);
  EXPECT_EQ(input.start_ns, 100);
  EXPECT_EQ(input.duration_ns, 200);
}

TEST_P(EventFeedTest, DeferredRejectionsAreNamedByTheLineOfTheirEvent) {
  // Events 0..2 come from lines 2, 5 and 5; the server refused events 1
  // and 2 and 3 more past its first ones.
  session_.deferred.deferred_rejections = 5;
  session_.deferred.first_deferred = {{1, "cpu 9 is not in the topology"},
                                      {2, "tid 0 must be > 0"}};
  EventFeed feed(collector_, nullptr, session_, no_progress_, &problems_,
                 GetParam());
  feed.OnInputLine(2);
  ASSERT_TRUE(feed.OnSample(At(100, 5)).ok());
  feed.OnInputLine(5);
  ASSERT_TRUE(feed.OnSample(At(200, 5)).ok());
  ASSERT_TRUE(feed.OnHandOver(HandOver{200, 0, 1, 5}).ok());
  AbInput input;
  ASSERT_TRUE(feed.Finish(input).ok());
  EXPECT_EQ(input.malformed_lines, 5u);
  EXPECT_THAT(input.malformed_examples,
              ElementsAre("line 5: cpu 9 is not in the topology",
                          "line 5: tid 0 must be > 0"));
}

TEST_F(EventFeedTest, AWorkloadsRefusedEventIsAnError) {
  session_.refused = {7};
  EventFeed feed(collector_, nullptr, session_, no_progress_,
                 /*problems=*/nullptr, /*jobs=*/1);
  EXPECT_EQ(feed.OnSample(At(100, 7)).code(),
            absl::StatusCode::kInvalidArgument);
  session_.deferred.deferred_rejections = 1;
  session_.deferred.first_deferred = {{0, "late"}};
  AbInput input;
  EXPECT_EQ(feed.Finish(input).status().message(),
            "the session rejected 1 events; the first, event 0: late");
}

TEST_F(EventFeedTest, ASessionErrorOnItsOwnThreadStopsTheFeedingThread) {
  session_.refused = {7};
  EventFeed feed(collector_, nullptr, session_, no_progress_,
                 /*problems=*/nullptr, /*jobs=*/2);
  ASSERT_TRUE(feed.OnSample(At(100, 7)).ok());  // queued, refused later
  // The session's thread stops at the first batch; the feeding thread
  // hears of it once the queue no longer takes batches: at the latest
  // when the batches after the first fill the queue.
  const uint64_t bound =
      EventFeed::kBatchEvents * (EventFeed::kQueuedBatches + 2);
  absl::Status status;
  for (uint64_t i = 0; i < bound && status.ok(); ++i) {
    status = feed.OnSample(At(200, 5));
  }
  EXPECT_EQ(status, absl::InvalidArgumentError("tid 7 refused"));
}

TEST_P(EventFeedTest, ProgressCountsTheEventsOffered) {
  std::vector<int64_t> events;
  const std::function<void(const AbProgress&)> progress =
      [&events](const AbProgress& p) { events.push_back(p.events); };
  EventFeed feed(collector_, nullptr, session_, progress, &problems_,
                 GetParam());
  // Progress is reported every 2^16 events.
  for (int64_t i = 0; i < 2 * 65536; ++i) {
    ASSERT_TRUE(feed.OnHandOver(HandOver{i, 0, 1, 5}).ok());
  }
  AbInput input;
  ASSERT_TRUE(feed.Finish(input).ok());
  EXPECT_THAT(events, ElementsAre(65536, 2 * 65536));
  EXPECT_EQ(input.handovers, 2u * 65536);
}

TEST_P(EventFeedTest, TheSpanOfAllOfInt64SaturatesInsteadOfOverflowing) {
  EventFeed feed(collector_, nullptr, session_, no_progress_, &problems_,
                 GetParam());
  ASSERT_TRUE(feed.OnHandOver(HandOver{INT64_MIN, 0, 1, 5}).ok());
  ASSERT_TRUE(feed.OnHandOver(HandOver{INT64_MAX, 1, 1, 6}).ok());
  AbInput input;
  ASSERT_TRUE(feed.Finish(input).ok());
  EXPECT_EQ(input.start_ns, INT64_MIN);
  EXPECT_EQ(input.duration_ns, INT64_MAX);  // 2^64 - 1 does not fit
}

INSTANTIATE_TEST_SUITE_P(Jobs, EventFeedTest, ::testing::Values(1, 2));

TEST(InputProblems, KeepsTheEarliestLinesWhateverTheOrderOfArrival) {
  InputProblems problems;
  for (int64_t line : {9, 3, 7, 1, 8, 2}) {
    problems.Add(line, "line " + std::to_string(line));
  }
  problems.Add(InputProblems::kUnknownLine, "event 99 of the stream");
  problems.AddUnlisted(3);
  AbInput input;
  problems.Fill(input);
  EXPECT_EQ(input.malformed_lines, 10u);
  EXPECT_THAT(input.malformed_examples,
              ElementsAre("line 1", "line 2", "line 3", "line 7", "line 8"));
}

}  // namespace
}  // namespace schedcache::ab
