// The client library's PreferenceWatch across a server restart: it
// reconnects on one socket path, sees the new incarnation and resyncs with
// a snapshot that says so; a deleted session ends it; Cancel wakes its
// backoff. In-process Servers on a temporary Unix socket; no sleeps.
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "server/server.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

constexpr int64_t kMs = 1'000'000;

class PreferenceWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    StartServer();
    client::Options options;
    options.address = address_;
    client_ = client::Client::Connect(options);
    ASSERT_TRUE(client_->WaitForReady().ok());
  }

  // StartServer starts a server on address_ whose `default` session is on
  // kTwoLlcTopology, so PreferLlc0Events changes preferences in it.
  void StartServer() {
    ServerOptions options;
    options.listen = {address_};
    options.default_topology = kTwoLlcTopology;
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void Ingest(const std::vector<Sample>& samples) {
    std::unique_ptr<client::IngestWriter> writer =
        client_->StartIngest("default");
    for (const Sample& sample : samples) ASSERT_TRUE(writer->Add(sample).ok());
    ASSERT_TRUE(writer->Finish().ok());
  }

  uint64_t Incarnation() const {
    absl::StatusOr<v1::Session> session = client_->GetSession("default");
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? session->incarnation() : 0;
  }

  TempDir dir_;
  const std::string address_ = "unix:" + dir_.path() + "/s.sock";
  std::unique_ptr<Server> server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(PreferenceWatchTest, ReconnectsAfterRestartAndResyncsWithSnapshot) {
  client::WatchOptions options;
  options.snapshot = true;
  options.reconnect = true;
  std::unique_ptr<client::PreferenceWatch> watch =
      client_->Watch("default", options);
  ASSERT_TRUE(watch->attached());
  const uint64_t first = Incarnation();
  std::optional<v1::WatchPreferencesResponse> event = watch->Next();
  ASSERT_TRUE(event.has_value()) << watch->Finish();
  EXPECT_EQ(event->snapshot_start().cause(), v1::SNAPSHOT_CAUSE_REQUESTED);
  EXPECT_TRUE(watch->Next()->has_synced());
  // Changes 1 and 2: process 100 to LLC 0 under the two cache-aware
  // policies.
  Ingest(PreferLlc0Events(100, 1000));
  EXPECT_EQ(watch->Next()->change().sequence(), 1u);
  EXPECT_EQ(watch->Next()->change().sequence(), 2u);

  // The server restarts on the same socket: its `default` session is a new
  // incarnation, which knows nothing of process 100.
  server_->Stop(absl::Seconds(1));
  server_.reset();
  StartServer();
  const uint64_t second = Incarnation();
  EXPECT_NE(second, first);
  // The resume after (first, 2) cannot be served: a fresh snapshot, empty.
  event = watch->Next();
  ASSERT_TRUE(event.has_value()) << watch->Finish();
  ASSERT_TRUE(event->has_snapshot_start());
  EXPECT_EQ(event->snapshot_start().cause(),
            v1::SNAPSHOT_CAUSE_INCARNATION_CHANGED);
  EXPECT_EQ(event->snapshot_start().incarnation(), second);
  EXPECT_EQ(event->snapshot_start().entries(), 0u);
  event = watch->Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->synced().sequence(), 0u);
  EXPECT_GE(watch->reconnects(), 1);
  // And the new incarnation's changes follow.
  Ingest(PreferLlc0Events(200, 1000 + 30 * kMs));
  event = watch->Next();
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->change().tgid(), 200);
  EXPECT_EQ(event->change().sequence(), 1u);
  EXPECT_EQ(event->change().incarnation(), second);
}

TEST_F(PreferenceWatchTest, DeletedSessionEndsWatchDespiteReconnect) {
  client::WatchOptions options;
  options.reconnect = true;
  std::unique_ptr<client::PreferenceWatch> watch =
      client_->Watch("default", options);
  EXPECT_TRUE(watch->Next()->has_synced());
  ASSERT_TRUE(client_->DeleteSession("default").ok());
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(watch->reconnects(), 0);
}

TEST_F(PreferenceWatchTest, StoppedServerEndsWatchWithoutReconnect) {
  std::unique_ptr<client::PreferenceWatch> watch = client_->Watch("default");
  EXPECT_TRUE(watch->Next()->has_synced());
  server_->Stop(absl::Seconds(1));
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kUnavailable);
}

TEST_F(PreferenceWatchTest, CancelWakesTheReconnectBackoff) {
  client::WatchOptions options;
  options.reconnect = true;
  // Without the wake-up, Next would wait an hour.
  options.initial_backoff = absl::Hours(1);
  options.max_backoff = absl::Hours(1);
  std::unique_ptr<client::PreferenceWatch> watch =
      client_->Watch("default", options);
  EXPECT_TRUE(watch->Next()->has_synced());
  server_->Stop(absl::Seconds(1));
  std::thread cancel([&watch] { watch->Cancel(); });
  EXPECT_FALSE(watch->Next().has_value());
  cancel.join();
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace schedcache::test_support
