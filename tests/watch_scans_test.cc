// The WatchScans protocol on the wire (raw gRPC stub) and through the
// client library's ScanWatch: every executed scan with its cost and the
// preference after it, filters, drops told in-band and in the metrics, and
// how a stream ends (NOT_FOUND on delete, UNAVAILABLE on stop, after what
// was queued). A real Server in-process on a temporary Unix socket; no
// sleeps.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"
#include "policies/testing/test_topologies.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "tests/raw_stream.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

// RawScanWatch is one WatchScans call on the stub, attached (initial
// metadata received) or refused once constructed.
class RawScanWatch : public RawStream<v1::WatchScansResponse> {
 public:
  RawScanWatch(v1::SchedCache::Stub& stub, const v1::WatchScansRequest& request)
      : RawStream([&](grpc::ClientContext* context) {
          return stub.WatchScans(context, request);
        }) {}
};

class WatchScansTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(ServerOptions()); }

  void Start(ServerOptions options) {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
    stub_ = v1::SchedCache::NewStub(
        grpc::CreateChannel(test_->server->addresses().front(),
                            grpc::InsecureChannelCredentials()));
    ASSERT_TRUE(test_->client->CreateSession(TwoLlcSessionRequest("s")).ok());
  }

  // Ingest sends `samples` on one stream, in one batch whatever the
  // machine's speed (no size or time flush before Finish).
  void Ingest(const std::vector<Sample>& samples) {
    std::unique_ptr<client::IngestWriter> writer = test_->client->StartIngest(
        "s", {.max_batch_events = 1024, .max_delay = absl::Hours(1)});
    for (const Sample& sample : samples) ASSERT_TRUE(writer->Add(sample).ok());
    absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
    ASSERT_TRUE(summary.ok()) << summary.status();
    ASSERT_EQ(summary->rejected(), 0u);
  }

  static v1::WatchScansRequest Request() {
    v1::WatchScansRequest request;
    request.set_session("s");
    return request;
  }

  // Scans keeps the scan messages of `read`.
  static std::vector<v1::ScanEvent> Scans(
      const std::vector<v1::WatchScansResponse>& read) {
    std::vector<v1::ScanEvent> scans;
    for (const v1::WatchScansResponse& response : read) {
      if (response.has_scan()) scans.push_back(response.scan());
    }
    return scans;
  }

  std::unique_ptr<TestServer> test_;
  std::unique_ptr<v1::SchedCache::Stub> stub_;
};

// PreferLlc0Events(100, 1000) (server_fixture.h) scans once per policy, at
// its second tick: t = 1000 + 20 ms, from CPU 0, thread 101. full-scan
// examines both LLCs of kTwoLlcTopology, 2 CPUs each (4 CPUs, 2 LLCs);
// visited-scan only CPU 0, the one the process ran on (1 CPU, 1 LLC); both
// then prefer LLC 0. `none` never executes a scan, so it sends nothing.
TEST_F(WatchScansTest, EveryExecutedScanWithItsCostAndPreferenceAfter) {
  RawScanWatch watch(*stub_, Request());
  std::vector<Sample> samples = PreferLlc0Events(100, 1000);
  samples[0].comm = Comm("redis-server");
  Ingest(samples);
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  auto [read, status] = watch.ReadToEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  const std::vector<v1::ScanEvent> scans = Scans(read);
  ASSERT_EQ(read.size(), 2u);
  ASSERT_EQ(scans.size(), 2u);
  const int64_t when = 1000 + 20 * kMs;
  struct Want {
    const char* policy;
    uint32_t cpus;
    uint32_t llcs;
  };
  const Want wants[] = {{"full-scan", 4, 2}, {"visited-scan", 1, 1}};
  for (size_t i = 0; i < 2; ++i) {
    const v1::ScanEvent& scan = scans[i];
    EXPECT_EQ(scan.policy(), wants[i].policy);
    EXPECT_EQ(scan.tgid(), 100);
    EXPECT_EQ(scan.tid(), 101);
    EXPECT_EQ(scan.cpu(), 0);
    EXPECT_EQ(scan.timestamp_ns(), when);
    EXPECT_EQ(scan.cost().cpus_scanned(), wants[i].cpus) << wants[i].policy;
    EXPECT_EQ(scan.cost().llcs_scanned(), wants[i].llcs) << wants[i].policy;
    EXPECT_GE(scan.cost().scan_ns(), 0);
    EXPECT_EQ(scan.preferred_llc(), 0);
    EXPECT_EQ(scan.comm(), "redis-server");
    // One occupancy per LLC examined; the process ran on CPU 0 only, so
    // LLC 0 holds all of it.
    ASSERT_EQ(scan.llc_occupancy_size(), static_cast<int>(wants[i].llcs))
        << wants[i].policy;
    for (const v1::LlcOccupancy& llc : scan.llc_occupancy()) {
      if (llc.llc() == 0) {
        EXPECT_GT(llc.occupancy(), 0u) << wants[i].policy;
      } else {
        EXPECT_EQ(llc.occupancy(), 0u) << wants[i].policy << " LLC " << llc.llc();
      }
    }
  }
}

// Two processes, one scan each per cache-aware policy (the derivation
// above; the second process on CPU 2, LLC 1): a policy filter and a tgid
// filter each keep exactly what they name.
TEST_F(WatchScansTest, FiltersSelectPolicyAndProcesses) {
  v1::WatchScansRequest visited = Request();
  visited.set_policy("visited-scan");
  v1::WatchScansRequest process_200 = Request();
  process_200.add_tgid(200);
  RawScanWatch by_policy(*stub_, visited);
  RawScanWatch by_process(*stub_, process_200);
  std::vector<Sample> samples = PreferLlc0Events(100, 1000);
  samples.push_back(SampleAt(1000 + 30 * kMs, 2, 200, 201, kMs, true, 2));
  samples.push_back(SampleAt(1000 + 50 * kMs, 2, 200, 201, kMs, true));
  Ingest(samples);
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());

  const std::vector<v1::ScanEvent> policy_scans =
      Scans(by_policy.ReadToEnd().first);
  ASSERT_EQ(policy_scans.size(), 2u);
  EXPECT_EQ(policy_scans[0].tgid(), 100);
  EXPECT_EQ(policy_scans[1].tgid(), 200);
  for (const v1::ScanEvent& scan : policy_scans) {
    EXPECT_EQ(scan.policy(), "visited-scan");
  }
  const std::vector<v1::ScanEvent> process_scans =
      Scans(by_process.ReadToEnd().first);
  ASSERT_EQ(process_scans.size(), 2u);
  EXPECT_EQ(process_scans[0].policy(), "full-scan");
  EXPECT_EQ(process_scans[1].policy(), "visited-scan");
  for (const v1::ScanEvent& scan : process_scans) {
    EXPECT_EQ(scan.tgid(), 200);
    EXPECT_EQ(scan.preferred_llc(), 1);
  }
}

TEST_F(WatchScansTest, BadRequestsEndWithAStatusNamingTheValue) {
  v1::WatchScansRequest policy = Request();
  policy.set_policy("fastest-scan");
  auto [read, status] = RawScanWatch(*stub_, policy).ReadToEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "policy \"fastest-scan\" is not a policy of session \"s\"");

  v1::WatchScansRequest tgid = Request();
  tgid.add_tgid(-3);
  status = RawScanWatch(*stub_, tgid).ReadToEnd().second;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tgid[0] -3 is not > 0");

  v1::WatchScansRequest session = Request();
  session.set_session("nosuch");
  status = RawScanWatch(*stub_, session).ReadToEnd().second;
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("nosuch"));
}

// With --max_watch_queue 1 and one batch of 40 scans (20 processes of
// ScanningProcessesEvents), the session queues every scan before the
// stream writes any (writes start once the batch is applied and the
// session's lock released): one scan may take the write slot (unless the
// initial metadata still holds it), one takes the queue's one place, and
// the other 38 or 39 are dropped. The session's deletion tells them at the
// end of the stream, so scans read plus scans told dropped are all 40.
TEST_F(WatchScansTest, DropsAreToldInBandSoEveryScanIsAccountedFor) {
  ServerOptions options;
  options.limits.max_watch_queue = 1;
  test_.reset();
  Start(options);
  RawScanWatch watch(*stub_, Request());
  Ingest(ScanningProcessesEvents(20, 1000));
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  auto [read, status] = watch.ReadToEnd();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  ASSERT_GE(read.size(), 2u);
  ASSERT_LE(read.size(), 3u);
  for (size_t i = 0; i + 1 < read.size(); ++i) EXPECT_TRUE(read[i].has_scan());
  ASSERT_TRUE(read.back().has_dropped());
  EXPECT_EQ(read.back().dropped().count(), 40 - (read.size() - 1));
}

TEST_F(WatchScansTest, ShutdownEndsTheStreamWithUnavailableAfterItsScans) {
  RawScanWatch watch(*stub_, Request());
  Ingest(PreferLlc0Events(100, 1000));
  test_->server->Stop(absl::Seconds(1));
  auto [read, status] = watch.ReadToEnd();
  EXPECT_EQ(Scans(read).size(), 2u);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "server stopping");
}

// The client library's ScanWatch on the read-only listener: attached, the
// scans, then NOT_FOUND once the session is deleted.
TEST_F(WatchScansTest, ReadOnlyListenerServesScanWatchThroughTheClient) {
  TempDir dir;
  ServerOptions options;
  options.read_only_listen = {"unix:" + dir.path() + "/ro.sock"};
  test_.reset();
  Start(options);
  client::Options read_only;
  read_only.address = test_->server->read_only_addresses().front();
  std::unique_ptr<client::Client> reader = client::Client::Connect(read_only);
  std::unique_ptr<client::ScanWatch> scans =
      reader->WatchScans("s", {.policy = "full-scan", .tgids = {}});
  ASSERT_TRUE(scans->attached());
  Ingest(PreferLlc0Events(100, 1000));
  ASSERT_TRUE(test_->client->DeleteSession("s").ok());
  std::vector<v1::WatchScansResponse> read;
  while (std::optional<v1::WatchScansResponse> event = scans->Next()) {
    read.push_back(*std::move(event));
  }
  EXPECT_EQ(scans->Finish().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].scan().policy(), "full-scan");
  EXPECT_EQ(read[0].scan().cost().cpus_scanned(), 4u);
}

TEST_F(WatchScansTest, TheClientSaysWhyAStreamWasRefused) {
  std::unique_ptr<client::ScanWatch> scans =
      test_->client->WatchScans("nosuch");
  EXPECT_FALSE(scans->attached());
  EXPECT_FALSE(scans->Next().has_value());
  EXPECT_EQ(scans->Finish().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace schedcache::test_support
