// Requests a hostile or careless client can send: huge or garbled names,
// oversized fields, topologies past --max_topology_cpus, a session deleted
// under its own Ingest stream, idle streams of one kind. Each gets a short,
// clear status naming the field or the limit, and the server keeps
// answering everyone else.
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "tests/server_fixture.h"
#include "topology/testing/xml_samples.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

// kHuge is a name of 1 MiB: echoed whole, it would make every message that
// names it a megabyte, larger than gRPC lets a status message be.
const std::string kHuge(1 << 20, 'n');
// kHugeQuoted is how messages show it: 80 bytes, then its length.
const std::string kHugeQuoted =
    "\"" + std::string(80, 'n') + "...\" (1048576 bytes)";

class ServerRobustnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix);
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
  }
  const client::Client& client() const { return *test_->client; }

  // ExpectHealthy checks that the server still answers.
  void ExpectHealthy() const {
    EXPECT_TRUE(client().ListSessions().ok());
    EXPECT_TRUE(client().GetTopology().ok());
  }

  std::unique_ptr<TestServer> test_;
};

TEST_F(ServerRobustnessTest, HugeSessionNamesAreQuotedShortly) {
  const std::string not_found = "session " + kHugeQuoted + " not found";
  EXPECT_EQ(client().GetSession(kHuge).status().message(), not_found);
  EXPECT_EQ(client().DeleteSession(kHuge).message(), not_found);
  EXPECT_EQ(client().GetTopology(kHuge).status().message(), not_found);
  EXPECT_EQ(client().GetReport(kHuge).status().message(), not_found);
  v1::RecommendRequest recommend;
  recommend.set_session(kHuge);
  recommend.set_tgid(1);
  EXPECT_EQ(client().Recommend(recommend).status().message(), not_found);
  std::unique_ptr<client::PreferenceWatch> watch = client().Watch(kHuge);
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().message(), not_found);
  std::unique_ptr<client::IngestWriter> writer = client().StartIngest(kHuge);
  ASSERT_TRUE(writer->Add(SampleAt(1, 0, 1, 1, 1, true)).ok());
  absl::StatusOr<v1::IngestSummary> ingested = writer->Finish();
  EXPECT_EQ(ingested.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ingested.status().message()), StartsWith(not_found));

  absl::Status created =
      client().CreateSession(TwoLlcSessionRequest(kHuge)).status();
  EXPECT_EQ(created.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(created.message(),
            "name: " + kHugeQuoted +
                " is not a session name (1 to 64 characters of "
                "[A-Za-z0-9_.-])");
  ExpectHealthy();
}

TEST_F(ServerRobustnessTest, LaterBatchNamingAHugeSessionIsQuotedShortly) {
  auto stub = v1::SchedCache::NewStub(grpc::CreateChannel(
      test_->server->addresses().front(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::IngestSummary summary;
  auto writer = stub->Ingest(&context, &summary);
  v1::IngestBatch batch;
  batch.set_session("default");
  ASSERT_TRUE(writer->Write(batch));
  batch.set_session(kHuge);
  writer->Write(batch);
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "batch 2 names session " + kHugeQuoted +
                " but this stream feeds \"default\" (this stream: 0 events "
                "accepted, 0 rejected)");
  ExpectHealthy();
}

TEST_F(ServerRobustnessTest, ControlBytesInNamesAreEscaped) {
  EXPECT_EQ(client().GetSession("a\nb\x01\x7f").status().message(),
            "session \"a\\nb\\x01\\x7f\" not found");
}

TEST_F(ServerRobustnessTest, OversizedFieldsAreRefusedNamingTheField) {
  v1::CreateSessionRequest long_spec = TwoLlcSessionRequest("s");
  long_spec.mutable_topology()->set_spec("synthetic:" + std::string(5000, ' ') +
                                         "pu:2");
  absl::Status status = client().CreateSession(long_spec).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("topology.spec: \"synthetic:"));
  EXPECT_THAT(status.message(),
              HasSubstr("(5014 bytes) is longer than 4096 bytes"));

  v1::CreateSessionRequest long_xml_name = TwoLlcSessionRequest("s");
  long_xml_name.mutable_topology()->set_xml("<topology/>");
  long_xml_name.mutable_topology()->set_xml_name(std::string(300, 'x'));
  status = client().CreateSession(long_xml_name).status();
  EXPECT_THAT(status.message(), HasSubstr("topology.xml_name: \"xxx"));
  EXPECT_THAT(status.message(),
              HasSubstr("(300 bytes) is longer than 256 bytes"));

  v1::CreateSessionRequest long_value = TwoLlcSessionRequest("s");
  v1::TunableSetting* setting = long_value.add_tunables();
  setting->set_name("aggr_tolerance");
  setting->set_value(kHuge);
  status = client().CreateSession(long_value).status();
  EXPECT_EQ(status.message(), "tunables: the value of aggr_tolerance, " +
                                  kHugeQuoted + ", is longer than 64 bytes");

  v1::CreateSessionRequest long_tunable = TwoLlcSessionRequest("s");
  long_tunable.add_tunables()->set_name(kHuge);
  status = client().CreateSession(long_tunable).status();
  EXPECT_THAT(std::string(status.message()),
              StartsWith("tunables: " + kHugeQuoted));

  v1::CreateSessionRequest long_policy = TwoLlcSessionRequest("s");
  long_policy.add_policies(kHuge);
  status = client().CreateSession(long_policy).status();
  EXPECT_EQ(status.message(),
            "policies: unknown policy " + kHugeQuoted + " (see ListPolicies)");
  ExpectHealthy();
}

TEST_F(ServerRobustnessTest, TopologyPastTheCpuLimitIsRefusedAtOnce) {
  // The reproducer: hwloc would take minutes over one core of
  // 30,000 PUs; the count alone (1 x 1 x 1 x 30000) refuses it.
  v1::CreateSessionRequest synthetic = TwoLlcSessionRequest("big");
  synthetic.mutable_topology()->set_spec(
      "synthetic:pack:1 l3:1 core:1 pu:30000");
  absl::Status status = client().CreateSession(synthetic).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "topology synthetic:pack:1 l3:1 core:1 pu:30000: describes 30000 "
            "CPUs, more than the limit of 16384 (flag --max_topology_cpus)");

  // XML counted by its exported PU objects, before hwloc reads it.
  std::string xml;
  for (int i = 0; i < 16'385; ++i) xml += "<object type=\"PU\"/>";
  v1::CreateSessionRequest uploaded = TwoLlcSessionRequest("big");
  uploaded.mutable_topology()->set_xml(xml);
  status = client().CreateSession(uploaded).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "topology uploaded.xml: describes 16385 CPUs, more than the limit "
            "of 16384 (flag --max_topology_cpus)");
  ExpectHealthy();
}

TEST_F(ServerRobustnessTest, XmlThatCrashesHwlocIsRefusedAndTheServerLivesOn) {
  // Before hwloc read uploads in a reader process, these bytes killed
  // schedcached with SIGSEGV inside hwloc_insert_object_by_parent.
  v1::CreateSessionRequest uploaded = TwoLlcSessionRequest("crash");
  uploaded.mutable_topology()->set_xml(std::string(kXmlThatCrashesHwloc));
  absl::Status status = client().CreateSession(uploaded).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("topology uploaded.xml: hwloc failed reading it: "
                         "the reader process "));
  ExpectHealthy();
  // The name was not taken by the failed build.
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("crash")).ok());
}

TEST_F(ServerRobustnessTest, DeletingDefaultUnderItsIngestStreamEndsIt) {
  std::unique_ptr<client::IngestWriter> writer = client().StartIngest("");
  ASSERT_TRUE(writer->Add(SampleAt(1000, 0, 10, 11, 100, true)).ok());
  ASSERT_TRUE(writer->Flush().ok());
  // Wait until the batch was applied, so the stream holds the session.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  uint64_t accepted = 0;
  while (accepted == 0 && absl::Now() < deadline) {
    absl::StatusOr<v1::Session> session = client().GetSession("default");
    ASSERT_TRUE(session.ok()) << session.status();
    accepted = session->events_accepted();
  }
  ASSERT_EQ(accepted, 1u);
  ASSERT_TRUE(client().DeleteSession("default").ok());
  (void)writer->Add(SampleAt(2000, 0, 10, 11, 100, true));
  absl::StatusOr<v1::IngestSummary> ended = writer->Finish();
  EXPECT_EQ(ended.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ended.status().message()),
              StartsWith("session \"default\" was deleted"));
  EXPECT_THAT(ended.status().message(),
              HasSubstr("(this stream: 1 events accepted, 0 rejected)"));

  // A new `default` takes the name, and a stream to it works.
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("default")).ok());
  std::unique_ptr<client::IngestWriter> again = client().StartIngest("");
  ASSERT_TRUE(again->Add(SampleAt(1000, 0, 10, 11, 100, true)).ok());
  absl::StatusOr<v1::IngestSummary> summary = again->Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 1u);
  absl::StatusOr<v1::ListSessionsResponse> list = client().ListSessions();
  ASSERT_TRUE(list.ok());
  EXPECT_THAT(list->sessions(), SizeIs(1));
}

// StartWith starts a server with `limits`, or fails the test.
std::unique_ptr<TestServer> StartWith(Limits limits) {
  ServerOptions options;
  options.limits = limits;
  absl::StatusOr<std::unique_ptr<TestServer>> server =
      TestServer::Start(Transport::kUnix, std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// IngestOne sends one sample to `default` on a stream of its own.
absl::StatusOr<v1::IngestSummary> IngestOne(const client::Client& client,
                                            const Sample& sample) {
  std::unique_ptr<client::IngestWriter> writer = client.StartIngest("");
  (void)writer->Add(sample);
  return writer->Finish();
}

TEST(StreamLimits, IdleWatchesCannotLockOutIngest) {
  // Before --max_watch_streams, watches and Ingest shared --max_streams:
  // here the two watches would have refused the Ingest.
  std::unique_ptr<TestServer> test =
      StartWith(Limits{.max_streams = 2, .max_watch_streams = 2});
  ASSERT_NE(test, nullptr);
  std::unique_ptr<client::PreferenceWatch> first = test->client->Watch("default");
  std::unique_ptr<client::PreferenceWatch> second =
      test->client->Watch("default");
  ASSERT_TRUE(first->attached());
  ASSERT_TRUE(second->attached());
  std::unique_ptr<client::PreferenceWatch> third =
      test->client->Watch("default");
  EXPECT_FALSE(third->Next().has_value());
  absl::Status status = third->Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "stream limit reached: 2 WatchPreferences streams are open (flag "
            "--max_watch_streams)");
  absl::StatusOr<v1::IngestSummary> summary =
      IngestOne(*test->client, SampleAt(1, 0, 1, 1, 1, true));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 1u);
}

TEST(StreamLimits, MaxStreamsBoundsIngestOnly) {
  std::unique_ptr<TestServer> test =
      StartWith(Limits{.max_streams = 1, .max_watch_streams = 1});
  ASSERT_NE(test, nullptr);
  std::unique_ptr<client::IngestWriter> open =
      test->client->StartIngest("default");
  ASSERT_TRUE(open->Add(SampleAt(1, 0, 1, 1, 1, true)).ok());
  ASSERT_TRUE(open->Flush().ok());
  // Once the batch is applied, the stream is surely open on the server.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  uint64_t accepted = 0;
  while (accepted == 0 && absl::Now() < deadline) {
    absl::StatusOr<v1::Session> session = test->client->GetSession("default");
    ASSERT_TRUE(session.ok()) << session.status();
    accepted = session->events_accepted();
  }
  ASSERT_EQ(accepted, 1u);
  absl::StatusOr<v1::IngestSummary> refused =
      IngestOne(*test->client, SampleAt(2, 0, 1, 1, 1, true));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("1 Ingest streams are open (flag --max_streams)"));
  // A watch still gets its own slot.
  EXPECT_TRUE(test->client->Watch("default")->attached());
  EXPECT_TRUE(open->Finish().ok());
}

}  // namespace
}  // namespace schedcache::test_support
