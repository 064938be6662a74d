// Session without gRPC: batches apply in order with rejections counted,
// watchers hear numbered changes through their filters, a watcher starts
// from a snapshot, a replay or the latest sequence as its spec says, and a
// closed session refuses every later call and ends its streams.
//
// The preference every test provokes (docs/MODEL.md, The model): on the
// 1 node x 2 LLCs x 4 CPUs grid, CPUs 4-7 are LLC 1. A 4-thread process
// (it fits the 4-CPU LLC) whose only runtime is on CPU 5 and whose one thread asks for a scan there prefers
// CPU 5, so LLC 1, under full-scan and visited-scan alike; each policy
// reports that as one change from -1 to 1.
#include "server/session.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/session_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/testing/test_registry.h"
#include "policies/testing/test_topologies.h"
#include "server/stream_sink.h"

namespace schedcache {
namespace {

using test_support::MakeGrid;
using test_support::SampleAt;
using ::testing::ElementsAre;

// RecordingSink keeps what a session queues into it, as a stream would
// send it: the start, then each change, then the close status.
class RecordingSink : public PreferenceSink {
 public:
  bool EnqueueStart(std::vector<v1::WatchPreferencesResponse> start) override {
    start_ = std::move(start);
    return true;
  }
  bool Enqueue(const v1::PreferenceChange& change) override {
    changes_.push_back(change);
    return true;
  }
  void Flush() override { ++flushes_; }
  void Close(const absl::Status& why) override {
    if (closed_.ok()) closed_ = why;
  }

  const std::vector<v1::WatchPreferencesResponse>& start() const {
    return start_;
  }
  const std::vector<v1::PreferenceChange>& changes() const { return changes_; }
  int flushes() const { return flushes_; }
  const absl::Status& closed() const { return closed_; }

 private:
  std::vector<v1::WatchPreferencesResponse> start_;
  std::vector<v1::PreferenceChange> changes_;
  int flushes_ = 0;
  absl::Status closed_;
};

// MakeSession is a session "s" over the 2-LLC grid with `policies`, whose
// scans run only when asked (so a test decides when a change happens), and
// `history` retained changes.
std::shared_ptr<Session> MakeSession(std::vector<std::string> policies,
                                     int history = 16) {
  SessionSettings settings;
  settings.name = "s";
  for (std::string& name : policies) {
    settings.policies.push_back(PolicyChoice{std::move(name), {}});
  }
  settings.options.trigger = ScanTrigger::kQuery;
  absl::StatusOr<std::shared_ptr<Session>> session =
      Session::Create(std::move(settings), MakeGrid({1, 2, 4}),
                      test_support::TestRegistry(), history);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

// RunOnCpu5 applies one sample of `tgid`'s thread `tgid` on CPU 5 at `ts`,
// saying the process has 4 threads (a single-threaded process is never
// given a preference: docs/MODEL.md, The model, invalid_nr).
void RunOnCpu5(Session& session, int32_t tgid, int64_t ts) {
  const std::vector<Event> batch = {
      SampleAt(ts, 5, tgid, tgid, 1000, false, 4)};
  ASSERT_TRUE(session
                  .ApplyBatch(batch, 0,
                              [](size_t, const absl::Status& error) {
                                ADD_FAILURE() << error;
                              })
                  .ok());
}

// ScanFor asks every policy for a fresh scan of `tgid`'s thread `tgid`.
void ScanFor(Session& session, int32_t tgid) {
  RecommendRequest request;
  request.tgid = tgid;
  request.tid = tgid;
  request.scan = true;
  ASSERT_TRUE(session.Recommend(request).ok());
}

TEST(SessionApplyBatch, ARejectedEventIsCountedAndTheRestStillApply) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  // Event 1 has tgid 0, which no process has; events 0 and 2 are valid.
  const std::vector<Event> batch = {SampleAt(10, 0, 1, 1, 10, false),
                                    SampleAt(20, 0, 0, 1, 10, false),
                                    SampleAt(30, 1, 2, 2, 10, false)};
  std::vector<size_t> rejected;
  ASSERT_TRUE(session
                  ->ApplyBatch(batch, 3,
                               [&rejected](size_t index, const absl::Status&) {
                                 rejected.push_back(index);
                               })
                  .ok());
  EXPECT_THAT(rejected, ElementsAre(1u));
  const SessionStats stats = session->Stats();
  EXPECT_EQ(stats.events_accepted, 2u);
  // The one the engine rejected and the 3 the decoder could not read.
  EXPECT_EQ(stats.events_rejected, 4u);
  EXPECT_EQ(stats.processes_tracked, 2u);
}

TEST(SessionRecommend, NotFoundNamesAnUntrackedProcess) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  RecommendRequest request;
  request.tgid = 42;
  const absl::Status status = session->Recommend(request).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("42"));
}

TEST(SessionWatch, ChangesAreNumberedInOrderAndFilteredPerWatcher) {
  std::shared_ptr<Session> session = MakeSession({"full-scan", "visited-scan"});
  ASSERT_NE(session, nullptr);
  auto all = std::make_shared<RecordingSink>();
  auto visited_of_7 = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(all, WatchSpec{}).ok());
  WatchSpec filtered;
  filtered.filter.policy = "visited-scan";
  filtered.filter.tgids = {7};
  ASSERT_TRUE(session->AddWatcher(visited_of_7, filtered).ok());
  // Without a snapshot or a resume, a watcher starts at Synced of the
  // latest sequence: 0, since nothing changed yet.
  ASSERT_EQ(all->start().size(), 1u);
  EXPECT_EQ(all->start()[0].synced().sequence(), 0u);

  RunOnCpu5(*session, 6, 1000);
  RunOnCpu5(*session, 7, 2000);
  ScanFor(*session, 6);  // sequences 1 (full-scan) and 2 (visited-scan)
  ScanFor(*session, 7);  // sequences 3 and 4
  std::vector<std::string> heard;
  for (const v1::PreferenceChange& change : all->changes()) {
    heard.push_back(absl::StrCat(change.sequence(), " ", change.tgid(), " ",
                                 change.policy(), " ", change.new_llc()));
  }
  EXPECT_THAT(heard, ElementsAre("1 6 full-scan 1", "2 6 visited-scan 1",
                                 "3 7 full-scan 1", "4 7 visited-scan 1"));
  ASSERT_EQ(visited_of_7->changes().size(), 1u);
  EXPECT_EQ(visited_of_7->changes()[0].sequence(), 4u);
  EXPECT_EQ(all->changes()[0].incarnation(), session->incarnation());
}

TEST(SessionWatch, AFilterOnAPolicyTheSessionLacksIsRefused) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  WatchSpec spec;
  spec.filter.policy = "visited-scan";
  const absl::Status status =
      session->AddWatcher(std::make_shared<RecordingSink>(), spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("\"visited-scan\""));
}

TEST(SessionWatch, ASnapshotListsEachCurrentPreferenceAtTheLatestSequence) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  RunOnCpu5(*session, 6, 1000);
  ScanFor(*session, 6);  // sequence 1
  auto sink = std::make_shared<RecordingSink>();
  WatchSpec spec;
  spec.snapshot = true;
  ASSERT_TRUE(session->AddWatcher(sink, spec).ok());
  // SnapshotStart, one entry (process 6 prefers LLC 1), Synced at 1.
  const std::vector<v1::WatchPreferencesResponse>& start = sink->start();
  ASSERT_EQ(start.size(), 3u);
  EXPECT_EQ(start[0].snapshot_start().cause(), v1::SNAPSHOT_CAUSE_REQUESTED);
  EXPECT_EQ(start[0].snapshot_start().entries(), 1u);
  EXPECT_TRUE(start[1].change().snapshot());
  EXPECT_EQ(start[1].change().tgid(), 6);
  EXPECT_EQ(start[1].change().new_llc(), 1);
  EXPECT_EQ(start[1].change().sequence(), 1u);
  EXPECT_EQ(start[2].synced().sequence(), 1u);
  EXPECT_EQ(sink->flushes(), 1);
}

// Processes 6 and 7, of 2 threads each, both name cache group 77 and run
// on CPU 5 (docs/MODEL.md, Cache groups): the group has 4 threads, which
// fit LLC 1's 4 CPUs, and its runtime is all on CPU 5, so a scan by 6
// makes the group prefer LLC 1 (as the 4-thread process of the header
// does). 7 never scans, yet its Recommend answers LLC 1, naming group 77:
// the preference is the group's. The change is heard once per member, and
// the snapshot lists both, each naming its group.
TEST(SessionCacheGroups, EveryMemberAnswersAndHearsItsGroupsPreference) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(sink, WatchSpec{}).ok());
  std::vector<Event> batch;
  for (int32_t tgid : {6, 7}) {
    Sample sample = SampleAt(1000 + tgid, 5, tgid, tgid, 1000, false, 2);
    sample.cache_group = 77;
    batch.push_back(sample);
  }
  ASSERT_TRUE(session
                  ->ApplyBatch(batch, 0,
                               [](size_t, const absl::Status& error) {
                                 ADD_FAILURE() << error;
                               })
                  .ok());
  ScanFor(*session, 6);
  RecommendRequest of_7;
  of_7.tgid = 7;
  const absl::StatusOr<v1::RecommendResponse> answer =
      session->Recommend(of_7);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->cache_group(), 77u);
  ASSERT_EQ(answer->decisions_size(), 1);
  EXPECT_EQ(answer->decisions(0).preferred_llc(), 1);
  std::vector<std::string> heard;
  for (const v1::PreferenceChange& change : sink->changes()) {
    heard.push_back(absl::StrCat(change.tgid(), " group ",
                                 change.cache_group(), " llc ",
                                 change.new_llc()));
  }
  EXPECT_THAT(heard, ::testing::UnorderedElementsAre("6 group 77 llc 1",
                                                     "7 group 77 llc 1"));
  auto later = std::make_shared<RecordingSink>();
  WatchSpec snapshot;
  snapshot.snapshot = true;
  ASSERT_TRUE(session->AddWatcher(later, snapshot).ok());
  // SnapshotStart, the entries of 6 and 7, Synced.
  ASSERT_EQ(later->start().size(), 4u);
  for (int entry : {1, 2}) {
    EXPECT_EQ(later->start()[entry].change().cache_group(), 77u);
    EXPECT_EQ(later->start()[entry].change().new_llc(), 1);
  }
}

TEST(SessionWatch, AResumeReplaysRetainedChangesOrFallsBackToASnapshot) {
  // Two changes retained of three: 2 and 3.
  std::shared_ptr<Session> session = MakeSession({"full-scan"}, 2);
  ASSERT_NE(session, nullptr);
  for (int32_t tgid : {6, 7, 8}) {
    RunOnCpu5(*session, tgid, 1000 * tgid);
    ScanFor(*session, tgid);
  }
  WatchSpec resume;
  resume.resume_incarnation = session->incarnation();

  resume.resume_after_sequence = 1;  // 2 and 3 are retained: a replay
  auto replayed = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(replayed, resume).ok());
  ASSERT_EQ(replayed->start().size(), 3u);
  EXPECT_EQ(replayed->start()[0].change().sequence(), 2u);
  EXPECT_EQ(replayed->start()[1].change().tgid(), 8);
  EXPECT_EQ(replayed->start()[2].synced().sequence(), 3u);

  resume.resume_after_sequence = 0;  // change 1 is gone: a snapshot
  auto gone = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(gone, resume).ok());
  EXPECT_EQ(gone->start()[0].snapshot_start().cause(),
            v1::SNAPSHOT_CAUSE_HISTORY_GONE);
  EXPECT_EQ(gone->start()[0].snapshot_start().entries(), 3u);

  resume.resume_after_sequence = 4;  // beyond the latest, 3
  EXPECT_EQ(session->AddWatcher(std::make_shared<RecordingSink>(), resume)
                .code(),
            absl::StatusCode::kInvalidArgument);

  resume.resume_incarnation = session->incarnation() + 1;
  auto other = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(other, resume).ok());
  EXPECT_EQ(other->start()[0].snapshot_start().cause(),
            v1::SNAPSHOT_CAUSE_INCARNATION_CHANGED);
}

TEST(SessionWatch, ARemovedWatcherHearsNoMoreChanges) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(sink, WatchSpec{}).ok());
  session->RemoveWatcher(sink.get());
  RunOnCpu5(*session, 6, 1000);
  ScanFor(*session, 6);
  EXPECT_TRUE(sink->changes().empty());
}

TEST(SessionClose, EndsTheStreamsAndRefusesLaterCalls) {
  std::shared_ptr<Session> session = MakeSession({"full-scan"});
  ASSERT_NE(session, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(session->AddWatcher(sink, WatchSpec{}).ok());
  const absl::Status deleted = absl::NotFoundError("session \"s\" was deleted");
  session->Close(deleted);
  EXPECT_EQ(sink->closed(), deleted);
  const std::vector<Event> batch = {SampleAt(10, 0, 1, 1, 10, false)};
  EXPECT_EQ(session->ApplyBatch(batch, 0, [](size_t, const absl::Status&) {}),
            deleted);
  EXPECT_EQ(session->AddWatcher(std::make_shared<RecordingSink>(), WatchSpec{}),
            deleted);
  // Nothing of the refused batch was applied.
  EXPECT_EQ(session->Stats().events_accepted, 0u);
}

}  // namespace
}  // namespace schedcache
