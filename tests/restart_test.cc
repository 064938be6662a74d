// Restarts and shutdown of an in-process server: named sessions stored in a
// state directory come back after a restart, a bad state file is skipped
// without costing the others, health keeps answering NOT_SERVING while the
// server drains, and an Ingest stream cut by the shutdown learns exactly
// what was applied.
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "server/state_dir.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// StartWithStateDir starts a server that keeps its sessions in `path`.
std::unique_ptr<TestServer> StartWithStateDir(const std::string& path) {
  absl::StatusOr<std::unique_ptr<StateDir>> dir = StateDir::Open(path);
  EXPECT_TRUE(dir.ok()) << dir.status();
  if (!dir.ok()) return nullptr;
  ServerOptions options;
  options.state_dir = *std::move(dir);
  absl::StatusOr<std::unique_ptr<TestServer>> server =
      TestServer::Start(Transport::kUnix, std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

std::vector<std::string> SessionNames(const client::Client& client) {
  std::vector<std::string> names;
  absl::StatusOr<v1::ListSessionsResponse> list = client.ListSessions();
  EXPECT_TRUE(list.ok()) << list.status();
  if (list.ok()) {
    for (const v1::Session& session : list->sessions()) {
      names.push_back(session.name());
    }
  }
  return names;
}

// Definition is what a session's description says of its definition: the
// counters and the tracked processes are model state, which a restart
// does not keep, and the incarnation is new at every creation.
v1::Session Definition(v1::Session session) {
  session.clear_events_accepted();
  session.clear_events_rejected();
  session.clear_processes_tracked();
  session.clear_incarnation();
  return session;
}

// XmlOfTwoLlcs is hwloc's own XML export of kTwoLlcTopology.
std::string XmlOfTwoLlcs() {
  const CommandResult lstopo = RunCommand(
      {"/usr/bin/lstopo-no-graphics", "-i", "pack:1 l3:2 core:2 pu:1", "--of",
       "xml", "-"});
  EXPECT_EQ(lstopo.exit_code, 0) << lstopo.err;
  return lstopo.out;
}

TEST(Restart, NamedSessionsComeBackWithTheirDefinitionsAndEmptyModels) {
  TempDir state;
  const std::string path = state.path() + "/sessions";
  std::unique_ptr<TestServer> first = StartWithStateDir(path);
  ASSERT_NE(first, nullptr);
  v1::CreateSessionRequest alpha = TwoLlcSessionRequest("alpha");
  alpha.set_trigger(v1::SCAN_TRIGGER_QUERY);
  v1::TunableSetting* tunable = alpha.add_tunables();
  tunable->set_name("aggr_tolerance");
  tunable->set_value("100");
  v1::CreateSessionRequest beta = TwoLlcSessionRequest("beta");
  beta.mutable_topology()->set_xml(XmlOfTwoLlcs());
  beta.mutable_topology()->set_xml_name("two-llcs.xml");
  beta.clear_policies();
  beta.add_policies("visited-scan");
  ASSERT_TRUE(first->client->CreateSession(alpha).ok());
  ASSERT_TRUE(first->client->CreateSession(beta).ok());
  std::unique_ptr<client::IngestWriter> writer =
      first->client->StartIngest("alpha");
  for (const Sample& sample : PreferLlc0Events(100, 1000)) {
    ASSERT_TRUE(writer->Add(sample).ok());
  }
  ASSERT_TRUE(writer->Finish().ok());
  absl::StatusOr<v1::Session> alpha_before = first->client->GetSession("alpha");
  absl::StatusOr<v1::Session> beta_before = first->client->GetSession("beta");
  ASSERT_TRUE(alpha_before.ok() && beta_before.ok());
  ASSERT_EQ(alpha_before->events_accepted(), 2u);
  first.reset();

  std::unique_ptr<TestServer> second = StartWithStateDir(path);
  ASSERT_NE(second, nullptr);
  EXPECT_THAT(SessionNames(*second->client),
              ElementsAre("alpha", "beta", "default"));
  absl::StatusOr<v1::Session> alpha_after = second->client->GetSession("alpha");
  absl::StatusOr<v1::Session> beta_after = second->client->GetSession("beta");
  ASSERT_TRUE(alpha_after.ok() && beta_after.ok());
  EXPECT_EQ(Definition(*alpha_after).DebugString(),
            Definition(*alpha_before).DebugString());
  EXPECT_EQ(Definition(*beta_after).DebugString(),
            Definition(*beta_before).DebugString());
  EXPECT_THAT(beta_after->topology_source(), HasSubstr("two-llcs.xml"));
  // Each restored session is a new incarnation, so a watcher resuming
  // from before the restart gets a fresh snapshot.
  EXPECT_NE(alpha_after->incarnation(), alpha_before->incarnation());
  EXPECT_NE(beta_after->incarnation(), beta_before->incarnation());
  // The model starts empty: nothing accepted, tgid 100 unknown.
  EXPECT_EQ(alpha_after->events_accepted(), 0u);
  v1::RecommendRequest recommend;
  recommend.set_session("alpha");
  recommend.set_tgid(100);
  EXPECT_EQ(second->client->Recommend(recommend).status().code(),
            absl::StatusCode::kNotFound);

  // A deleted session stays deleted across the next restart.
  ASSERT_TRUE(second->client->DeleteSession("beta").ok());
  second.reset();
  std::unique_ptr<TestServer> third = StartWithStateDir(path);
  ASSERT_NE(third, nullptr);
  EXPECT_THAT(SessionNames(*third->client), ElementsAre("alpha", "default"));
}

TEST(Restart, BadStateFilesAreSkippedAndTheGoodSessionStillComesBack) {
  TempDir state;
  std::unique_ptr<TestServer> first = StartWithStateDir(state.path());
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->client->CreateSession(TwoLlcSessionRequest("good")).ok());
  first.reset();
  // Not a protobuf message: a length that runs past the end.
  std::ofstream(state.path() + "/corrupt.session") << "\x0a\x64zz";
  // A well-formed definition that CreateSession refuses.
  v1::CreateSessionRequest unknown_policy = TwoLlcSessionRequest("unknown");
  unknown_policy.add_policies("no-such-policy");
  std::ofstream(state.path() + "/unknown.session")
      << unknown_policy.SerializeAsString();
  // `default` is the host's, defined by flags, never restored.
  std::ofstream(state.path() + "/default.session")
      << TwoLlcSessionRequest("default").SerializeAsString();

  std::unique_ptr<TestServer> second = StartWithStateDir(state.path());
  ASSERT_NE(second, nullptr);
  EXPECT_THAT(SessionNames(*second->client), ElementsAre("default", "good"));
  absl::StatusOr<v1::Session> fallback = second->client->GetSession("default");
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->topology_source(), "host");
}

TEST(Restart, ASessionWhoseDefinitionCannotBeStoredIsNotCreated) {
  TempDir state;
  std::unique_ptr<TestServer> server = StartWithStateDir(state.path());
  ASSERT_NE(server, nullptr);
  // A directory where the file goes: the rename fails, for root too.
  const std::string target = state.path() + "/blocked.session";
  ASSERT_TRUE(std::filesystem::create_directories(target + "/inside"));
  const absl::Status created =
      server->client->CreateSession(TwoLlcSessionRequest("blocked")).status();
  EXPECT_EQ(created.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(created.message(), HasSubstr(target + ": rename from "));
  EXPECT_THAT(SessionNames(*server->client), ElementsAre("default"));
  // The name is free again once the obstacle is gone.
  std::filesystem::remove_all(target);
  EXPECT_TRUE(
      server->client->CreateSession(TwoLlcSessionRequest("blocked")).ok());
}

// HealthStatus asks grpc.health.v1.Health/Check about `service` and returns
// the ServingStatus number (1 SERVING, 2 NOT_SERVING), or the call's error.
// The messages are built by hand: Debian ships no health.proto for C++.
// HealthCheckRequest { string service = 1; } and HealthCheckResponse
// { ServingStatus status = 1; }: a response of status s is the bytes 08 s.
absl::StatusOr<int> HealthStatus(const std::string& address,
                                 const std::string& service) {
  grpc::GenericStub stub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  std::string request_bytes = "\x0a" + std::string(1, service.size()) + service;
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  absl::Notification done;
  grpc::Status status;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", {}, &request,
                 &response, [&](grpc::Status result) {
                   status = std::move(result);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) {
    return absl::UnavailableError(status.error_message());
  }
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("no response");
  std::string bytes;
  for (const grpc::Slice& part : slices) {
    bytes.append(reinterpret_cast<const char*>(part.begin()), part.size());
  }
  if (bytes.empty()) return 0;  // UNKNOWN, the default value
  if (bytes.size() != 2 || bytes[0] != 0x08) {
    return absl::InternalError("unexpected HealthCheckResponse");
  }
  return static_cast<int>(bytes[1]);
}

constexpr int kServing = 1;
constexpr int kNotServing = 2;

TEST(Shutdown, HealthAnswersNotServingToNewChecksWhileDraining) {
  absl::StatusOr<std::unique_ptr<TestServer>> test =
      TestServer::Start(Transport::kUnix);
  ASSERT_TRUE(test.ok()) << test.status();
  const std::string address = (*test)->server->addresses().front();
  for (const std::string service : {"", "schedcache.v1.SchedCache"}) {
    absl::StatusOr<int> health = HealthStatus(address, service);
    ASSERT_TRUE(health.ok()) << health.status();
    EXPECT_EQ(*health, kServing) << "service \"" << service << "\"";
  }
  absl::StatusOr<int> unknown = HealthStatus(address, "no.such.Service");
  EXPECT_FALSE(unknown.ok());

  // A grace of 4 s: the window in which new calls are still served is
  // min(4 s / 2, 2 s) = 2 s after Stop starts.
  std::thread stopper([&] { (*test)->server->Stop(absl::Seconds(4)); });
  absl::StatusOr<int> health = HealthStatus(address, "");
  while (health.ok() && *health == kServing) health = HealthStatus(address, "");
  ASSERT_TRUE(health.ok()) << "the first answer after SERVING was a failed "
                              "call, not NOT_SERVING: "
                           << health.status();
  EXPECT_EQ(*health, kNotServing);
  // New calls, made after the drain began, are still answered.
  absl::StatusOr<int> named = HealthStatus(address, "schedcache.v1.SchedCache");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(*named, kNotServing);
  EXPECT_THAT(SessionNames(*(*test)->client), ElementsAre("default"));
  stopper.join();
  EXPECT_FALSE(HealthStatus(address, "").ok()) << "stopped servers answer";
}

TEST(Shutdown, AnIngestStreamCutByShutdownReportsExactlyWhatWasApplied) {
  absl::StatusOr<std::unique_ptr<TestServer>> test =
      TestServer::Start(Transport::kUnix);
  ASSERT_TRUE(test.ok()) << test.status();
  client::Client& client = *(*test)->client;
  ASSERT_TRUE(client.CreateSession(TwoLlcSessionRequest("s")).ok());
  std::unique_ptr<client::IngestWriter> writer = client.StartIngest("s");
  // Three samples in one batch: CPU 9 does not exist on kTwoLlcTopology
  // (CPUs 0-3), so 2 are accepted and 1 rejected, at stream index 1.
  ASSERT_TRUE(writer->Add(SampleAt(1000, 0, 10, 11, 100, true)).ok());
  ASSERT_TRUE(writer->Add(SampleAt(1000, 9, 10, 11, 100, true)).ok());
  ASSERT_TRUE(writer->Add(SampleAt(2000, 1, 10, 12, 100, true)).ok());
  ASSERT_TRUE(writer->Flush().ok());
  // Wait until the batch is applied, so the stream is idle when cut.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  uint64_t seen = 0;
  while (seen < 3 && absl::Now() < deadline) {
    absl::StatusOr<v1::Session> session = client.GetSession("s");
    ASSERT_TRUE(session.ok()) << session.status();
    seen = session->events_accepted() + session->events_rejected();
  }
  ASSERT_EQ(seen, 3u);

  (*test)->server->Stop(absl::Seconds(1));
  const absl::StatusOr<v1::IngestSummary> finished = writer->Finish();
  ASSERT_EQ(finished.status().code(), absl::StatusCode::kUnavailable)
      << finished.status();
  EXPECT_THAT(finished.status().message(),
              HasSubstr("the server is stopping (this stream: 2 events "
                        "accepted, 1 rejected)"));
  const std::optional<v1::IngestSummary> applied =
      client::IngestSummaryOf(finished.status());
  ASSERT_TRUE(applied.has_value());
  EXPECT_EQ(applied->accepted(), 2u);
  EXPECT_EQ(applied->rejected(), 1u);
  EXPECT_EQ(applied->batches(), 1u);
  ASSERT_EQ(applied->first_rejections_size(), 1);
  EXPECT_EQ(applied->first_rejections(0).index(), 1u);
  EXPECT_FALSE(client::IngestSummaryOf(absl::UnavailableError("x")));
}

}  // namespace
}  // namespace schedcache::test_support
