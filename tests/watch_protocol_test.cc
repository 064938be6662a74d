// The WatchPreferences protocol on the wire (raw gRPC stub, no client
// library): sequences and incarnations, snapshot then Synced then changes
// without gap or duplicate under concurrent Ingest, resume from retained
// history or by a fresh snapshot, filters, and how a stream ends. A real
// Server in-process on a temporary Unix socket; no sleeps.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/grpc_status.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "tests/raw_stream.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

// PreferLlc1Events is PreferLlc0Events on CPU 2, the first CPU of LLC 1 of
// kTwoLlcTopology: the same derivation gives pref_cpu 2, LLC -1 -> 1.
std::vector<Sample> PreferLlc1Events(int tgid, int64_t t0) {
  return {SampleAt(t0, 2, tgid, tgid + 1, 1 * kMs, true, /*nr_threads=*/2),
          SampleAt(t0 + 20 * kMs, 2, tgid, tgid + 1, 1 * kMs, true)};
}

// RawWatch is one WatchPreferences call on the stub, attached (initial
// metadata received) or refused once constructed.
class RawWatch : public RawStream<v1::WatchPreferencesResponse> {
 public:
  RawWatch(v1::SchedCache::Stub& stub, const v1::WatchPreferencesRequest& request)
      : RawStream([&](grpc::ClientContext* context) {
          return stub.WatchPreferences(context, request);
        }) {}
};

// Key is (tgid, policy).
using Key = std::pair<int32_t, std::string>;

class WatchProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(ServerOptions()); }

  void Start(ServerOptions options) {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
    stub_ = v1::SchedCache::NewStub(grpc::CreateChannel(
        test_->server->addresses().front(), grpc::InsecureChannelCredentials()));
    ASSERT_TRUE(test_->client->CreateSession(TwoLlcSessionRequest("s")).ok());
  }

  void Ingest(const std::vector<Sample>& samples) {
    std::unique_ptr<client::IngestWriter> writer =
        test_->client->StartIngest("s");
    for (const Sample& sample : samples) ASSERT_TRUE(writer->Add(sample).ok());
    absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->rejected(), 0u);
  }

  // IngestTwoProcesses makes four changes: 1 and 2 are process 100 to LLC 0
  // (full-scan, then visited-scan: session order), 3 and 4 process 200 to
  // LLC 1. `none` never changes.
  void IngestTwoProcesses() {
    Ingest(PreferLlc0Events(100, 1000));
    Ingest(PreferLlc1Events(200, 1000 + 30 * kMs));
  }

  uint64_t Incarnation() {
    absl::StatusOr<v1::Session> session = test_->client->GetSession("s");
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? session->incarnation() : 0;
  }

  static v1::WatchPreferencesRequest Request() {
    v1::WatchPreferencesRequest request;
    request.set_session("s");
    return request;
  }
  static v1::WatchPreferencesRequest Resume(uint64_t incarnation,
                                            uint64_t after) {
    v1::WatchPreferencesRequest request = Request();
    request.set_resume_incarnation(incarnation);
    request.set_resume_after_sequence(after);
    return request;
  }

  std::unique_ptr<TestServer> test_;
  std::unique_ptr<v1::SchedCache::Stub> stub_;
};

// Sequences lists the sequences of the changes among `read`.
std::vector<uint64_t> Sequences(
    const std::vector<v1::WatchPreferencesResponse>& read) {
  std::vector<uint64_t> sequences;
  for (const v1::WatchPreferencesResponse& r : read) {
    if (r.has_change()) sequences.push_back(r.change().sequence());
  }
  return sequences;
}

TEST_F(WatchProtocolTest, SnapshotHoldsEveryProcessAndPolicyThenSynced) {
  IngestTwoProcesses();
  v1::WatchPreferencesRequest request = Request();
  request.set_snapshot(true);
  RawWatch watch(*stub_, request);
  // SnapshotStart, 2 processes x 3 policies, Synced.
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(8);
  ASSERT_EQ(read.size(), 8u);
  const uint64_t incarnation = Incarnation();
  EXPECT_NE(incarnation, 0u);
  ASSERT_TRUE(read[0].has_snapshot_start());
  EXPECT_EQ(read[0].snapshot_start().cause(), v1::SNAPSHOT_CAUSE_REQUESTED);
  EXPECT_EQ(read[0].snapshot_start().incarnation(), incarnation);
  EXPECT_EQ(read[0].snapshot_start().entries(), 6u);
  std::map<Key, v1::PreferenceChange> entries;
  for (int i = 1; i <= 6; ++i) {
    ASSERT_TRUE(read[i].has_change());
    const v1::PreferenceChange& entry = read[i].change();
    EXPECT_TRUE(entry.snapshot());
    EXPECT_EQ(entry.sequence(), 4u);
    EXPECT_EQ(entry.incarnation(), incarnation);
    // The session clock: process 200's second sample.
    EXPECT_EQ(entry.timestamp_ns(), 1000 + 50 * kMs);
    entries[{entry.tgid(), entry.policy()}] = entry;
  }
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[Key(100, "full-scan")].new_llc(), 0);
  EXPECT_EQ(entries[Key(100, "full-scan")].new_cpu(), 0);
  EXPECT_EQ(entries[Key(100, "visited-scan")].new_llc(), 0);
  EXPECT_EQ(entries[Key(200, "full-scan")].new_llc(), 1);
  EXPECT_EQ(entries[Key(200, "visited-scan")].new_cpu(), 2);
  EXPECT_EQ(entries[Key(200, "visited-scan")].reason(),
            v1::NO_PREFERENCE_REASON_UNSPECIFIED);
  EXPECT_EQ(entries[Key(200, "none")].new_llc(), -1);
  EXPECT_EQ(entries[Key(200, "none")].reason(),
            v1::NO_PREFERENCE_REASON_NOT_CACHE_AWARE);
  ASSERT_TRUE(read[7].has_synced());
  EXPECT_EQ(read[7].synced().sequence(), 4u);
  EXPECT_EQ(read[7].synced().incarnation(), incarnation);

  // Then the changes after sequence 4, numbered on.
  Ingest(PreferLlc0Events(300, 1000 + 60 * kMs));
  read = watch.Read(2);
  EXPECT_THAT(Sequences(read), ElementsAre(5, 6));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_FALSE(read[0].change().snapshot());
  EXPECT_EQ(read[0].change().tgid(), 300);
  EXPECT_EQ(read[0].change().new_cpu(), 0);
  EXPECT_EQ(read[0].change().incarnation(), incarnation);
}

TEST_F(WatchProtocolTest, PlainWatchStartsWithSyncedThenChanges) {
  Ingest(PreferLlc0Events(100, 1000));
  RawWatch watch(*stub_, Request());
  Ingest(PreferLlc1Events(200, 1000 + 30 * kMs));
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(3);
  ASSERT_EQ(read.size(), 3u);
  // Changes 1 and 2 came before the watch: it starts at 2.
  ASSERT_TRUE(read[0].has_synced());
  EXPECT_EQ(read[0].synced().sequence(), 2u);
  EXPECT_EQ(read[0].synced().incarnation(), Incarnation());
  EXPECT_THAT(Sequences(read), ElementsAre(3, 4));
  EXPECT_EQ(read[1].change().tgid(), 200);
  EXPECT_EQ(read[1].change().old_llc(), -1);
  EXPECT_EQ(read[1].change().new_llc(), 1);
  EXPECT_EQ(read[1].change().new_cpu(), 2);
}

TEST_F(WatchProtocolTest, ResumeWithinHistoryReplaysWhatFollows) {
  IngestTwoProcesses();
  RawWatch watch(*stub_, Resume(Incarnation(), 2));
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(3);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_THAT(Sequences(read), ElementsAre(3, 4));
  EXPECT_FALSE(read[0].change().snapshot());
  EXPECT_EQ(read[0].change().tgid(), 200);
  ASSERT_TRUE(read[2].has_synced());
  EXPECT_EQ(read[2].synced().sequence(), 4u);
  Ingest(PreferLlc0Events(300, 1000 + 60 * kMs));
  EXPECT_THAT(Sequences(watch.Read(2)), ElementsAre(5, 6));
}

TEST_F(WatchProtocolTest, ResumeAtLatestSequenceReplaysNothing) {
  IngestTwoProcesses();
  RawWatch watch(*stub_, Resume(Incarnation(), 4));
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(1);
  ASSERT_EQ(read.size(), 1u);
  ASSERT_TRUE(read[0].has_synced());
  EXPECT_EQ(read[0].synced().sequence(), 4u);
}

TEST_F(WatchProtocolTest, ResumeBeyondHistoryGetsSnapshotSayingSo) {
  ServerOptions options;
  options.limits.watch_history = 1;
  test_.reset();
  Start(options);
  IngestTwoProcesses();
  const uint64_t incarnation = Incarnation();
  {
    // Only change 4 is retained: a resume after 3 still replays.
    RawWatch watch(*stub_, Resume(incarnation, 3));
    std::vector<v1::WatchPreferencesResponse> read = watch.Read(2);
    EXPECT_THAT(Sequences(read), ElementsAre(4));
    ASSERT_EQ(read.size(), 2u);
    EXPECT_TRUE(read[1].has_synced());
  }
  // Change 3 is gone: a resume after 2 gets the state instead.
  RawWatch watch(*stub_, Resume(incarnation, 2));
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(8);
  ASSERT_EQ(read.size(), 8u);
  ASSERT_TRUE(read[0].has_snapshot_start());
  EXPECT_EQ(read[0].snapshot_start().cause(), v1::SNAPSHOT_CAUSE_HISTORY_GONE);
  EXPECT_EQ(read[0].snapshot_start().entries(), 6u);
  EXPECT_TRUE(read[1].change().snapshot());
  ASSERT_TRUE(read[7].has_synced());
  EXPECT_EQ(read[7].synced().sequence(), 4u);
}

TEST_F(WatchProtocolTest, ResumeInAnotherIncarnationGetsSnapshotSayingSo) {
  IngestTwoProcesses();
  const uint64_t old_incarnation = Incarnation();
  // The session is re-created: same name, new incarnation, no changes yet.
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  ASSERT_TRUE(test_->client->CreateSession(TwoLlcSessionRequest("s")).ok());
  const uint64_t incarnation = Incarnation();
  EXPECT_NE(incarnation, old_incarnation);
  RawWatch watch(*stub_, Resume(old_incarnation, 4));
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(2);
  ASSERT_EQ(read.size(), 2u);
  ASSERT_TRUE(read[0].has_snapshot_start());
  EXPECT_EQ(read[0].snapshot_start().cause(),
            v1::SNAPSHOT_CAUSE_INCARNATION_CHANGED);
  EXPECT_EQ(read[0].snapshot_start().incarnation(), incarnation);
  EXPECT_EQ(read[0].snapshot_start().entries(), 0u);
  ASSERT_TRUE(read[1].has_synced());
  EXPECT_EQ(read[1].synced().sequence(), 0u);
  Ingest(PreferLlc0Events(100, 1000));
  EXPECT_THAT(Sequences(watch.Read(2)), ElementsAre(1, 2));
}

TEST_F(WatchProtocolTest, ResumeFromAFutureSequenceIsInvalidArgument) {
  IngestTwoProcesses();
  const uint64_t incarnation = Incarnation();
  RawWatch watch(*stub_, Resume(incarnation, 5));
  auto [read, status] = watch.ReadToEnd();
  EXPECT_TRUE(read.empty());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            absl::StrCat("resume_after_sequence 5 is beyond the latest "
                         "sequence 4 of session \"s\" (incarnation ",
                         incarnation, ")"));
}

TEST_F(WatchProtocolTest, FiltersSelectPolicyAndProcesses) {
  IngestTwoProcesses();
  v1::WatchPreferencesRequest request = Request();
  request.set_snapshot(true);
  request.set_policy("visited-scan");
  request.add_tgid(200);
  request.add_tgid(400);
  RawWatch watch(*stub_, request);
  // Changes 5..8: 300 and 400, each full-scan then visited-scan. Only 8
  // (400 under visited-scan) passes.
  Ingest(PreferLlc0Events(300, 1000 + 60 * kMs));
  Ingest(PreferLlc1Events(400, 1000 + 90 * kMs));
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  auto [read, status] = watch.ReadToEnd();
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(read[0].snapshot_start().entries(), 1u);
  EXPECT_EQ(read[1].change().tgid(), 200);
  EXPECT_EQ(read[1].change().policy(), "visited-scan");
  EXPECT_EQ(read[1].change().new_llc(), 1);
  EXPECT_EQ(read[2].synced().sequence(), 4u);
  EXPECT_EQ(read[3].change().tgid(), 400);
  EXPECT_EQ(read[3].change().policy(), "visited-scan");
  EXPECT_EQ(read[3].change().sequence(), 8u);
  // Deleting the session ends the stream with NOT_FOUND once drained.
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "session \"s\" was deleted");
}

TEST_F(WatchProtocolTest, BadFiltersAreInvalidArgumentNamingTheValue) {
  v1::WatchPreferencesRequest request = Request();
  request.set_policy("no-such");
  {
    RawWatch watch(*stub_, request);
    auto [read, status] = watch.ReadToEnd();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(),
              "policy \"no-such\" is not a policy of session \"s\"");
  }
  request = Request();
  request.add_tgid(7);
  request.add_tgid(-3);
  RawWatch watch(*stub_, request);
  auto [read, status] = watch.ReadToEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tgid[1] -3 is not > 0");
}

TEST_F(WatchProtocolTest, ShutdownEndsSnapshotWatchWithUnavailable) {
  IngestTwoProcesses();
  v1::WatchPreferencesRequest request = Request();
  request.set_snapshot(true);
  RawWatch watch(*stub_, request);
  test_->server->Stop(absl::Seconds(1));
  auto [read, status] = watch.ReadToEnd();
  // Everything queued before the stop is delivered first.
  EXPECT_EQ(read.size(), 8u);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "server stopping");
}

TEST_F(WatchProtocolTest, ReadOnlyListenerServesSnapshotWatch) {
  TempDir dir;
  ServerOptions options;
  options.read_only_listen = {"unix:" + dir.path() + "/ro.sock"};
  test_.reset();
  Start(options);
  IngestTwoProcesses();
  auto read_only = v1::SchedCache::NewStub(
      grpc::CreateChannel(test_->server->read_only_addresses().front(),
                          grpc::InsecureChannelCredentials()));
  v1::WatchPreferencesRequest request = Request();
  request.set_snapshot(true);
  RawWatch watch(*read_only, request);
  std::vector<v1::WatchPreferencesResponse> read = watch.Read(8);
  ASSERT_EQ(read.size(), 8u);
  EXPECT_EQ(read[0].snapshot_start().entries(), 6u);
  EXPECT_EQ(read[7].synced().sequence(), 4u);
}

// A snapshot taken while another stream ingests: the snapshot plus the
// changes after Synced give exactly the state Recommend reports at the
// end, and the changes after Synced are consecutive.
TEST_F(WatchProtocolTest, SnapshotUnderConcurrentIngestHasNoGapNoDuplicate) {
  constexpr int kProcesses = 600;
  std::vector<Sample> samples;
  for (int k = 0; k < kProcesses; ++k) {
    // Processes alternate between LLC 0 and LLC 1, 30 ms apart.
    const int tgid = 1000 + 2 * k;
    const int64_t t0 = 1000 + 30 * kMs * k;
    std::vector<Sample> events =
        k % 2 == 0 ? PreferLlc0Events(tgid, t0) : PreferLlc1Events(tgid, t0);
    samples.insert(samples.end(), events.begin(), events.end());
  }
  absl::Notification half_sent;
  std::thread ingest([&] {
    std::unique_ptr<client::IngestWriter> writer =
        test_->client->StartIngest("s");
    for (size_t i = 0; i < samples.size(); ++i) {
      EXPECT_TRUE(writer->Add(samples[i]).ok());
      // Small batches, so the snapshot lands between two of them.
      if (i % 16 == 15) {
        EXPECT_TRUE(writer->Flush().ok());
      }
      if (i == samples.size() / 2) half_sent.Notify();
    }
    EXPECT_TRUE(writer->Finish().ok());
  });
  // The snapshot is taken while the second half is still being applied.
  half_sent.WaitForNotification();
  v1::WatchPreferencesRequest request = Request();
  request.set_snapshot(true);
  RawWatch watch(*stub_, request);
  ingest.join();

  std::map<Key, int> expected;
  for (int k = 0; k < kProcesses; ++k) {
    v1::RecommendRequest recommend;
    recommend.set_session("s");
    recommend.set_tgid(1000 + 2 * k);
    absl::StatusOr<v1::RecommendResponse> answer =
        test_->client->Recommend(recommend);
    ASSERT_TRUE(answer.ok()) << answer.status();
    for (const v1::PolicyDecision& d : answer->decisions()) {
      expected[{answer->tgid(), d.policy()}] = d.preferred_llc();
    }
  }
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  auto [read, status] = watch.ReadToEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  std::map<Key, int> state;
  uint64_t next_sequence = 0;  // 0 until Synced
  for (const v1::WatchPreferencesResponse& r : read) {
    if (r.has_synced()) next_sequence = r.synced().sequence() + 1;
    if (!r.has_change()) continue;
    const v1::PreferenceChange& c = r.change();
    if (!c.snapshot()) {
      ASSERT_EQ(c.sequence(), next_sequence) << "gap or duplicate";
      ++next_sequence;
      // A change starts from the state the watcher holds.
      const auto held = state.find({c.tgid(), c.policy()});
      EXPECT_EQ(held == state.end() ? -1 : held->second, c.old_llc());
    }
    state[{c.tgid(), c.policy()}] = c.new_llc();
  }
  // `none` never changes, so a process tracked after the snapshot has no
  // `none` entry: it holds -1, as Recommend says.
  for (const auto& [key, llc] : expected) {
    if (key.second == "none" && !state.contains(key)) state[key] = -1;
  }
  EXPECT_EQ(state, expected);
  // One change per process under each of the two cache-aware policies.
  EXPECT_EQ(next_sequence - 1, 2u * kProcesses);
}

}  // namespace
}  // namespace schedcache::test_support
