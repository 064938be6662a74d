// Integration tests of schedcached: a real Server in-process, reached
// through the client library over a Unix socket and over TCP (127.0.0.1,
// port 0). Every RPC, every rejected input, parallel sessions, watching,
// and shutdown with streams open. No sleeps: waits are on conditions.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/str_cat.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Property;

constexpr int64_t kMs = 1'000'000;


// Ingest sends `samples` on one stream and returns the summary.
absl::StatusOr<v1::IngestSummary> Ingest(const client::Client& client,
                                         const std::string& session,
                                         const std::vector<Sample>& samples) {
  std::unique_ptr<client::IngestWriter> writer = client.StartIngest(session);
  for (const Sample& sample : samples) {
    if (absl::Status status = writer->Add(sample); !status.ok()) break;
  }
  return writer->Finish();
}

const v1::PolicyDecision* DecisionOf(const v1::RecommendResponse& response,
                                     const std::string& policy) {
  for (const v1::PolicyDecision& decision : response.decisions()) {
    if (decision.policy() == policy) return &decision;
  }
  return nullptr;
}

class ServerTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override { StartServer(ServerOptions()); }

  void StartServer(ServerOptions options) {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(GetParam(), std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
  }
  const client::Client& client() const { return *test_->client; }

  std::unique_ptr<TestServer> test_;
};

TEST_P(ServerTest, GetTopologyOfHostAndOfSession) {
  absl::StatusOr<v1::GetTopologyResponse> host = client().GetTopology();
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->topology().source(), "host");
  EXPECT_GT(host->topology().total_cpus(), 0u);
  EXPECT_FALSE(host->summary().empty());

  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  absl::StatusOr<v1::GetTopologyResponse> session = client().GetTopology("s");
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(session->topology().total_cpus(), 4u);
  EXPECT_EQ(session->topology().llcs_size(), 2);
  EXPECT_EQ(client().GetTopology("missing").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(ServerTest, ListPoliciesHasBuiltinsAndModelTunables) {
  absl::StatusOr<v1::ListPoliciesResponse> policies = client().ListPolicies();
  ASSERT_TRUE(policies.ok()) << policies.status();
  std::vector<std::string> names;
  for (const v1::PolicyInfo& policy : policies->policies()) {
    names.push_back(policy.name());
  }
  EXPECT_THAT(names, Contains("full-scan"));
  EXPECT_THAT(names, Contains("visited-scan"));
  EXPECT_THAT(names, Contains("none"));
  EXPECT_THAT(names, Contains("kernel"));
  std::vector<std::string> tunables;
  for (const v1::Tunable& tunable : policies->model_tunables()) {
    tunables.push_back(tunable.name());
  }
  EXPECT_THAT(tunables, Contains("epoch_period_jiffies"));
  EXPECT_THAT(tunables, Contains("affinity_timeout_epochs"));
  EXPECT_THAT(tunables, Contains("aggr_tolerance"));
  EXPECT_THAT(tunables, Contains("numa_balancing"));
  EXPECT_THAT(tunables, Contains("enable"));
}

TEST_P(ServerTest, SessionLifecycle) {
  absl::StatusOr<v1::Session> listed_default = client().GetSession("default");
  ASSERT_TRUE(listed_default.ok()) << listed_default.status();
  EXPECT_EQ(listed_default->topology_source(), "host");

  v1::CreateSessionRequest request = TwoLlcSessionRequest("ab");
  request.set_trigger(v1::SCAN_TRIGGER_QUERY);
  v1::TunableSetting* setting = request.add_tunables();
  setting->set_name("aggr_tolerance");
  setting->set_value("50");
  absl::StatusOr<v1::Session> created = client().CreateSession(request);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->name(), "ab");
  EXPECT_THAT(created->policies(),
              ElementsAre("full-scan", "visited-scan", "none"));
  EXPECT_EQ(created->trigger(), v1::SCAN_TRIGGER_QUERY);
  EXPECT_TRUE(created->enabled());
  EXPECT_THAT(created->tunables(),
              Contains(AllOf(Property(&v1::TunableSetting::name, "aggr_tolerance"),
                             Property(&v1::TunableSetting::value, "50"))));

  absl::StatusOr<v1::ListSessionsResponse> list = client().ListSessions();
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<std::string> names;
  for (const v1::Session& session : list->sessions()) {
    names.push_back(session.name());
  }
  EXPECT_THAT(names, ElementsAre("ab", "default"));

  EXPECT_EQ(client().CreateSession(request).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(client().DeleteSession("ab").ok());
  EXPECT_EQ(client().GetSession("ab").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(client().DeleteSession("ab").code(), absl::StatusCode::kNotFound);
}

TEST_P(ServerTest, CreateSessionRejectsBadRequests) {
  const auto code_of = [&](v1::CreateSessionRequest request) {
    return client().CreateSession(request).status();
  };
  v1::CreateSessionRequest bad_name = TwoLlcSessionRequest("no spaces");
  EXPECT_THAT(code_of(bad_name).message(), HasSubstr("name"));
  v1::CreateSessionRequest no_policy = TwoLlcSessionRequest("p");
  no_policy.clear_policies();
  EXPECT_EQ(code_of(no_policy).code(), absl::StatusCode::kInvalidArgument);
  v1::CreateSessionRequest unknown_policy = TwoLlcSessionRequest("p");
  unknown_policy.add_policies("no-such-policy");
  EXPECT_THAT(code_of(unknown_policy).message(), HasSubstr("no-such-policy"));
  v1::CreateSessionRequest unknown_tunable = TwoLlcSessionRequest("p");
  unknown_tunable.add_tunables()->set_name("no_such_tunable");
  EXPECT_THAT(code_of(unknown_tunable).message(), HasSubstr("no_such_tunable"));
  v1::CreateSessionRequest out_of_range = TwoLlcSessionRequest("p");
  v1::TunableSetting* setting = out_of_range.add_tunables();
  setting->set_name("aggr_tolerance");
  setting->set_value("101");
  EXPECT_EQ(code_of(out_of_range).code(), absl::StatusCode::kInvalidArgument);
  v1::CreateSessionRequest server_path = TwoLlcSessionRequest("p");
  server_path.mutable_topology()->set_spec("xml:/etc/passwd");
  EXPECT_EQ(code_of(server_path).code(), absl::StatusCode::kInvalidArgument);
  v1::CreateSessionRequest bad_xml = TwoLlcSessionRequest("p");
  bad_xml.mutable_topology()->set_xml("<not hwloc/>");
  EXPECT_EQ(code_of(bad_xml).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(ServerTest, IngestCountsAcceptedAndRejectedExactly) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  std::vector<Sample> samples = {
      SampleAt(1000, 0, 10, 11, 100, true),  // ok
      SampleAt(1000, 9, 10, 11, 100, true),  // cpu 9 does not exist
      SampleAt(1000, 1, 0, 11, 100, true),   // tgid 0
      SampleAt(1000, 1, 10, 0, 100, true),   // tid 0
      SampleAt(1000, 1, 10, 11, -5, true),   // negative delta
      SampleAt(500, 0, 10, 11, 100, true),   // backwards on cpu 0
      SampleAt(2000, 0, 10, 11, 100, true),  // ok
  };
  absl::StatusOr<v1::IngestSummary> summary = Ingest(client(), "s", samples);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 2u);
  EXPECT_EQ(summary->rejected(), 5u);
  ASSERT_EQ(summary->first_rejections_size(), 5);
  EXPECT_EQ(summary->first_rejections(0).index(), 1u);
  EXPECT_THAT(summary->first_rejections(0).reason(), HasSubstr("cpu 9"));
  EXPECT_THAT(summary->first_rejections(1).reason(), HasSubstr("tgid"));
  EXPECT_THAT(summary->first_rejections(2).reason(), HasSubstr("tid"));
  EXPECT_THAT(summary->first_rejections(3).reason(), HasSubstr("delta_ns"));
  EXPECT_THAT(summary->first_rejections(4).reason(), HasSubstr("timestamp"));

  absl::StatusOr<v1::Session> session = client().GetSession("s");
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->events_accepted(), 2u);
  EXPECT_EQ(session->events_rejected(), 5u);
}

TEST_P(ServerTest, IngestHandOversInOrderWithSamples) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  std::unique_ptr<client::IngestWriter> writer = client().StartIngest("s");
  HandOver in{.timestamp_ns = 100, .cpu = 1, .tgid = 10, .tid = 11};
  HandOver idle{.timestamp_ns = 300, .cpu = 1, .tgid = 0, .tid = 0};
  HandOver half_idle{.timestamp_ns = 400, .cpu = 1, .tgid = 0, .tid = 5};
  ASSERT_TRUE(writer->Add(in).ok());
  ASSERT_TRUE(writer->Add(SampleAt(200, 1, 10, 11, 100, true)).ok());
  ASSERT_TRUE(writer->Add(idle).ok());
  ASSERT_TRUE(writer->Add(half_idle).ok());
  absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 3u);
  EXPECT_EQ(summary->rejected(), 1u);
  absl::StatusOr<v1::Report> report = client().GetReport("s");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->handovers_applied(), 2u);
  EXPECT_EQ(report->samples_applied(), 1u);
}

TEST_P(ServerTest, CollectorLossesAddUpAcrossBatchesIntoTheReport) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  std::unique_ptr<client::IngestWriter> writer = client().StartIngest("s");
  v1::CollectorLosses first;
  first.set_ring_buffer_lost(3);
  first.set_unparsed(1);
  v1::CollectorLosses second;
  second.set_ring_buffer_lost(4);
  second.set_late(2);
  // The first losses ride with an event, the second in a batch of none.
  writer->AddLosses(first);
  ASSERT_TRUE(writer->Add(SampleAt(200, 1, 10, 11, 100, true)).ok());
  ASSERT_TRUE(writer->Flush().ok());
  writer->AddLosses(second);
  absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->batches(), 2u);
  absl::StatusOr<v1::Report> report = client().GetReport("s");
  ASSERT_TRUE(report.ok());
  // 3 + 4 ring buffer, 1 + 0 unparsed, 0 + 2 late.
  EXPECT_EQ(report->collector_losses().ring_buffer_lost(), 7u);
  EXPECT_EQ(report->collector_losses().unparsed(), 1u);
  EXPECT_EQ(report->collector_losses().late(), 2u);
}

TEST_P(ServerTest, IngestToUnknownSessionFailsWithNotFound) {
  absl::StatusOr<v1::IngestSummary> summary =
      Ingest(client(), "missing", {SampleAt(1, 0, 1, 1, 1, true)});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(summary.status().message(), HasSubstr("missing"));
}

TEST_P(ServerTest, RecommendAfterIngest) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  ASSERT_TRUE(Ingest(client(), "s", PreferLlc0Events(100, 1000)).ok());
  v1::RecommendRequest request;
  request.set_session("s");
  request.set_tgid(100);
  absl::StatusOr<v1::RecommendResponse> response = client().Recommend(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->decisions_size(), 3);
  for (const std::string policy : {"full-scan", "visited-scan"}) {
    const v1::PolicyDecision* decision = DecisionOf(*response, policy);
    ASSERT_NE(decision, nullptr);
    EXPECT_EQ(decision->preferred_llc(), 0) << policy;
    EXPECT_EQ(decision->preferred_cpu(), 0) << policy;
    EXPECT_EQ(decision->reason(), v1::NO_PREFERENCE_REASON_UNSPECIFIED) << policy;
    EXPECT_GT(decision->cost().cpus_scanned(), 0u) << policy;
    EXPECT_GT(decision->cost().llcs_scanned(), 0u) << policy;
    // The evidence: PreferLlc0Events gives nr_threads 2 and no footprint.
    EXPECT_EQ(decision->nr_threads(), 2) << policy;
    EXPECT_EQ(decision->footprint_pages(), 0) << policy;
  }
  // full-scan visits all 4 CPUs of both LLCs; visited-scan only CPU 0.
  EXPECT_EQ(DecisionOf(*response, "full-scan")->cost().cpus_scanned(), 4u);
  EXPECT_EQ(DecisionOf(*response, "visited-scan")->cost().cpus_scanned(), 1u);
  const v1::PolicyDecision* none = DecisionOf(*response, "none");
  EXPECT_EQ(none->preferred_llc(), -1);
  EXPECT_EQ(none->reason(), v1::NO_PREFERENCE_REASON_NOT_CACHE_AWARE);
}

TEST_P(ServerTest, RecommendUnknownProcessIsNotFoundNamingTgid) {
  v1::RecommendRequest request;
  request.set_tgid(424242);
  absl::StatusOr<v1::RecommendResponse> response = client().Recommend(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(response.status().message(), HasSubstr("424242"));
  request.set_session("missing");
  EXPECT_EQ(client().Recommend(request).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(ServerTest, QueryTriggerScansOnlyWhenAsked) {
  v1::CreateSessionRequest create = TwoLlcSessionRequest("q");
  create.set_trigger(v1::SCAN_TRIGGER_QUERY);
  ASSERT_TRUE(client().CreateSession(create).ok());
  ASSERT_TRUE(Ingest(client(), "q", PreferLlc0Events(100, 1000)).ok());
  v1::RecommendRequest request;
  request.set_session("q");
  request.set_tgid(100);
  absl::StatusOr<v1::RecommendResponse> before = client().Recommend(request);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(DecisionOf(*before, "full-scan")->preferred_llc(), -1);
  request.set_scan(true);
  absl::StatusOr<v1::RecommendResponse> after = client().Recommend(request);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_TRUE(DecisionOf(*after, "full-scan")->scanned_now());
  EXPECT_EQ(DecisionOf(*after, "full-scan")->preferred_llc(), 0);
}

TEST_P(ServerTest, GetReportSummarisesPolicies) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  ASSERT_TRUE(Ingest(client(), "s", PreferLlc0Events(100, 1000)).ok());
  absl::StatusOr<v1::Report> report = client().GetReport("s");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->policies_size(), 3);
  EXPECT_EQ(report->policies(0).policy(), "full-scan");
  EXPECT_GE(report->policies(0).scans(), 1u);
  EXPECT_EQ(report->policies(0).cpus_scanned().max(), 4);
  EXPECT_EQ(report->policies(1).cpus_scanned().max(), 1);
  EXPECT_EQ(report->policies(0).preferred_llc_changes(), 1u);
  // visited-scan chose the same LLC as the reference at every decision.
  EXPECT_EQ(report->policies(1).agreement(), 1.0);
  EXPECT_EQ(report->samples_applied(), 2u);
  EXPECT_EQ(report->processes_tracked(), 1u);
  EXPECT_EQ(client().GetReport("missing").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(ServerTest, TwoSessionsIngestInParallelWithoutInterfering) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("a")).ok());
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("b")).ok());
  constexpr int kSamples = 20'000;
  const auto feed = [&](const std::string& session, int tgid,
                        absl::StatusOr<v1::IngestSummary>* result) {
    std::vector<Sample> samples;
    for (int i = 0; i < kSamples; ++i) {
      samples.push_back(SampleAt(1000 + i * 1000, i % 4, tgid, tgid + 1 + i % 2,
                                 500, true, /*nr_threads=*/2));
    }
    *result = Ingest(client(), session, samples);
  };
  absl::StatusOr<v1::IngestSummary> a, b;
  std::thread ta(feed, "a", 100, &a);
  std::thread tb(feed, "b", 200, &b);
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->accepted(), kSamples);
  EXPECT_EQ(b->accepted(), kSamples);
  v1::RecommendRequest request;
  request.set_session("a");
  request.set_tgid(200);  // b's process is unknown to a
  EXPECT_EQ(client().Recommend(request).status().code(),
            absl::StatusCode::kNotFound);
  request.set_tgid(100);
  EXPECT_TRUE(client().Recommend(request).ok());
  absl::StatusOr<v1::Report> report = client().GetReport("b");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->samples_applied(), static_cast<uint64_t>(kSamples));
  EXPECT_EQ(report->processes_tracked(), 1u);
}

TEST_P(ServerTest, WatchSeesChangeCausedByIngest) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  std::unique_ptr<client::PreferenceWatch> watch = client().Watch("s");
  ASSERT_TRUE(Ingest(client(), "s", PreferLlc0Events(100, 1000)).ok());
  std::optional<v1::WatchPreferencesResponse> synced = watch->Next();
  ASSERT_TRUE(synced.has_value()) << watch->Finish();
  EXPECT_EQ(synced->synced().sequence(), 0u);
  std::vector<std::string> policies;
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::WatchPreferencesResponse> event = watch->Next();
    ASSERT_TRUE(event.has_value()) << watch->Finish();
    const v1::PreferenceChange* change = &event->change();
    EXPECT_EQ(change->sequence(), i + 1u);
    EXPECT_EQ(change->tgid(), 100);
    EXPECT_EQ(change->old_llc(), -1);
    EXPECT_EQ(change->new_llc(), 0);
    EXPECT_EQ(change->timestamp_ns(), 1000 + 20 * kMs);
    policies.push_back(change->policy());
  }
  EXPECT_THAT(policies, ::testing::UnorderedElementsAre("full-scan",
                                                        "visited-scan"));
  // Deleting the session ends the stream with NOT_FOUND, so a watcher can
  // tell it from a server restart.
  ASSERT_TRUE(client().DeleteSession("s").ok());
  EXPECT_FALSE(watch->Next().has_value());
  const absl::Status ended = watch->Finish();
  EXPECT_EQ(ended.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ended.message(), HasSubstr("session \"s\" was deleted"));
}

TEST_P(ServerTest, WatchUnknownSessionIsNotFound) {
  std::unique_ptr<client::PreferenceWatch> watch = client().Watch("missing");
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kNotFound);
}

TEST_P(ServerTest, ShutdownEndsOpenStreams) {
  std::unique_ptr<client::PreferenceWatch> watch = client().Watch("default");
  std::unique_ptr<client::IngestWriter> writer = client().StartIngest("s");
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  for (const Sample& sample : PreferLlc0Events(100, 1000)) {
    ASSERT_TRUE(writer->Add(sample).ok());
  }
  ASSERT_TRUE(writer->Flush().ok());
  test_->server->Stop(absl::Seconds(1));
  EXPECT_TRUE(watch->Next()->has_synced());
  EXPECT_FALSE(watch->Next().has_value());
  const absl::Status watch_ended = watch->Finish();
  EXPECT_EQ(watch_ended.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(watch_ended.message(), "server stopping");
  // The idle ingest stream was ended by the shutdown, saying why, with the
  // summary of what it applied (restart_test checks its counts).
  const absl::Status ended = writer->Finish().status();
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnavailable) << ended;
  EXPECT_TRUE(client::IngestSummaryOf(ended).has_value());
}

TEST_P(ServerTest, ClientWriterFlushesOnTime) {
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("s")).ok());
  client::IngestOptions options;
  options.max_batch_events = 1000;
  options.max_delay = absl::Milliseconds(10);
  std::unique_ptr<client::IngestWriter> writer =
      client().StartIngest("s", options);
  ASSERT_TRUE(writer->Add(SampleAt(1000, 0, 1, 2, 10, true)).ok());
  // The batch is far from full: only the timer can send it.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  uint64_t accepted = 0;
  while (accepted == 0 && absl::Now() < deadline) {
    absl::StatusOr<v1::Session> session = client().GetSession("s");
    ASSERT_TRUE(session.ok());
    accepted = session->events_accepted();
  }
  EXPECT_EQ(accepted, 1u);
  EXPECT_TRUE(writer->Finish().ok());
}

INSTANTIATE_TEST_SUITE_P(Transports, ServerTest,
                         ::testing::Values(Transport::kUnix, Transport::kTcp),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kUnix ? "Unix"
                                                                 : "Tcp";
                         });

// Limits: each hit gives a clear status naming its flag.
class LimitsTest : public ::testing::Test {
 protected:
  std::unique_ptr<TestServer> Start(Limits limits) {
    ServerOptions options;
    options.limits = limits;
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix, std::move(options));
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }
};

TEST_F(LimitsTest, MaxSessions) {
  std::unique_ptr<TestServer> test = Start(Limits{.max_sessions = 2});
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("one")).ok());
  absl::Status status =
      test->client->CreateSession(TwoLlcSessionRequest("two")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("--max_sessions"));
}

TEST_F(LimitsTest, MaxProcessesEvictsLeastRecentlyActive) {
  std::unique_ptr<TestServer> test = Start(Limits{.max_processes = 1});
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("s")).ok());
  ASSERT_TRUE(Ingest(*test->client, "s",
                     {SampleAt(1000, 0, 10, 11, 5, true),
                      SampleAt(2000, 1, 20, 21, 5, true)})
                  .ok());
  absl::StatusOr<v1::Report> report = test->client->GetReport("s");
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->processes_tracked(), 1u);
  EXPECT_EQ(report->processes_evicted(), 1u);
}

TEST_F(LimitsTest, MaxBatchEvents) {
  std::unique_ptr<TestServer> test = Start(Limits{.max_batch_events = 2});
  ASSERT_NE(test, nullptr);
  absl::StatusOr<v1::IngestSummary> summary =
      Ingest(*test->client, "default",
             {SampleAt(1, 0, 1, 1, 1, true), SampleAt(2, 0, 1, 1, 1, true),
              SampleAt(3, 0, 1, 1, 1, true)});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(summary.status().message(), HasSubstr("--max_batch_events"));
}

TEST_F(LimitsTest, MaxMessageBytes) {
  std::unique_ptr<TestServer> test = Start(Limits{.max_message_bytes = 1024});
  ASSERT_NE(test, nullptr);
  std::vector<Sample> samples;
  for (int i = 0; i < 200; ++i)
    samples.push_back(SampleAt(i, 0, 1, 1, 1, true));
  EXPECT_EQ(Ingest(*test->client, "default", samples).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(ServerStart, RefusesSocketWhereServerAnswers) {
  absl::StatusOr<std::unique_ptr<TestServer>> first =
      TestServer::Start(Transport::kUnix);
  ASSERT_TRUE(first.ok()) << first.status();
  ServerOptions options;
  options.listen = {(*first)->server->addresses().front()};
  EXPECT_EQ(Server::Start(options).status().code(),
            absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace schedcache::test_support
