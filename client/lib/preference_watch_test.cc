// PreferenceWatch against a scripted server that breaks and refuses its
// streams at chosen points: every stream asks for what WatchOptions say;
// a reconnect resumes after the last Synced or change read, never after a
// snapshot entry; while reconnecting NOT_FOUND and UNAVAILABLE are retried
// and any other refusal ends the watch; an UNAVAILABLE refusal of the
// first stream is retried with reconnect and ends the watch without. The
// backoff is zero, so no test waits for time.
#include "schedcache/client.h"

#include <memory>
#include <string>
#include <vector>

#include "client/lib/scripted_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::client {
namespace {

using ::testing::ElementsAre;
using Script = StreamScript<v1::WatchPreferencesResponse>;

v1::WatchPreferencesResponse SnapshotStart() {
  v1::WatchPreferencesResponse response;
  response.mutable_snapshot_start()->set_entries(1);
  return response;
}

v1::WatchPreferencesResponse Synced(uint64_t incarnation, uint64_t sequence) {
  v1::WatchPreferencesResponse response;
  response.mutable_synced()->set_incarnation(incarnation);
  response.mutable_synced()->set_sequence(sequence);
  return response;
}

v1::WatchPreferencesResponse Change(uint64_t incarnation, uint64_t sequence,
                                    bool snapshot) {
  v1::WatchPreferencesResponse response;
  v1::PreferenceChange& change = *response.mutable_change();
  change.set_incarnation(incarnation);
  change.set_sequence(sequence);
  change.set_snapshot(snapshot);
  change.set_tgid(6);
  return response;
}

grpc::Status Unavailable() {
  return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is stopping");
}

WatchOptions Reconnecting() {
  WatchOptions options;
  options.reconnect = true;
  return options;
}

// Resumes lists each request's resume position as "incarnation/sequence".
std::vector<std::string> Resumes(
    const std::vector<v1::WatchPreferencesRequest>& requests) {
  std::vector<std::string> resumes;
  for (const v1::WatchPreferencesRequest& request : requests) {
    resumes.push_back(std::to_string(request.resume_incarnation()) + "/" +
                      std::to_string(request.resume_after_sequence()));
  }
  return resumes;
}

class ScriptedPreferenceWatchTest : public ScriptedServerTest {
 protected:

  // Watch opens a watch of session "s" with a zero backoff.
  std::unique_ptr<PreferenceWatch> Watch(WatchOptions options) {
    options.initial_backoff = absl::ZeroDuration();
    options.max_backoff = absl::ZeroDuration();
    return client_->Watch("s", options);
  }

  // ReadAll reads the watch to its end; returns how many messages came.
  static int ReadAll(PreferenceWatch& watch) {
    int read = 0;
    while (watch.Next().has_value()) ++read;
    return read;
  }

};

TEST_F(ScriptedPreferenceWatchTest,
       AResumeStartsAfterTheLastSyncedOrChangeRead) {
  // Stream 1 breaks inside its snapshot: a snapshot entry is no position,
  // so stream 2 resumes nothing. Stream 2 reads Synced 5/3 and change 5/4,
  // then breaks: stream 3 resumes after 5/4. Stream 3 ends NOT_FOUND once
  // attached (the session was deleted), which ends the watch.
  server_->AddWatch(
      Script::Attached({SnapshotStart(), Change(5, 3, true)}, Unavailable()));
  server_->AddWatch(
      Script::Attached({Synced(5, 3), Change(5, 4, false)}, Unavailable()));
  server_->AddWatch(Script::Attached(
      {Change(5, 5, false)},
      grpc::Status(grpc::StatusCode::NOT_FOUND, "session deleted")));
  WatchOptions options;
  options.snapshot = true;
  options.policy = "full-scan";
  options.tgids = {6, 7};
  options.reconnect = true;
  std::unique_ptr<PreferenceWatch> watch = Watch(options);
  ASSERT_TRUE(watch->attached());
  EXPECT_EQ(ReadAll(*watch), 5);  // 2 + 2 + 1
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(watch->reconnects(), 2);

  const std::vector<v1::WatchPreferencesRequest> requests =
      server_->watch_requests();
  EXPECT_THAT(Resumes(requests), ElementsAre("0/0", "0/0", "5/4"));
  for (const v1::WatchPreferencesRequest& request : requests) {
    EXPECT_EQ(request.session(), "s");
    EXPECT_TRUE(request.snapshot());
    EXPECT_EQ(request.policy(), "full-scan");
    EXPECT_THAT(request.tgid(), ElementsAre(6, 7));
  }
}

TEST_F(ScriptedPreferenceWatchTest,
       ReconnectingRetriesNotFoundAndUnavailableOnly) {
  server_->AddWatch(Script::Attached({Synced(2, 1)}, Unavailable()));
  server_->AddWatch(Script::Refused(
      grpc::Status(grpc::StatusCode::NOT_FOUND, "session \"s\" not found")));
  server_->AddWatch(Script::Refused(Unavailable()));
  server_->AddWatch(Script::Refused(
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                   "policy \"x\" is not in session \"s\"")));
  std::unique_ptr<PreferenceWatch> watch = Watch(Reconnecting());
  ASSERT_TRUE(watch->attached());
  EXPECT_EQ(ReadAll(*watch), 1);
  const absl::Status ended = watch->Finish();
  EXPECT_EQ(ended.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ended.message(), "policy \"x\" is not in session \"s\"");
  EXPECT_EQ(watch->reconnects(), 3);
  EXPECT_THAT(Resumes(server_->watch_requests()),
              ElementsAre("0/0", "2/1", "2/1", "2/1"));
}

TEST_F(ScriptedPreferenceWatchTest,
       AnUnavailableFirstStreamIsRetriedOnlyWithReconnect) {
  server_->AddWatch(Script::Refused(Unavailable()));
  server_->AddWatch(Script::Attached({Synced(1, 0)}));
  std::unique_ptr<PreferenceWatch> watch = Watch(Reconnecting());
  EXPECT_FALSE(watch->attached());
  EXPECT_EQ(ReadAll(*watch), 1);
  EXPECT_TRUE(watch->Finish().ok());  // stream 2 ended OK
  EXPECT_EQ(watch->reconnects(), 1);

  server_->AddWatch(Script::Refused(Unavailable()));
  std::unique_ptr<PreferenceWatch> plain = Watch(WatchOptions());
  EXPECT_FALSE(plain->attached());
  EXPECT_EQ(ReadAll(*plain), 0);
  EXPECT_EQ(plain->Finish().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(plain->reconnects(), 0);
  EXPECT_EQ(server_->watch_requests().size(), 3u);
}

}  // namespace
}  // namespace schedcache::client
