// schedcached's Prometheus exposition, fetched directly over HTTP from a
// real Server in-process (--metrics_listen on 127.0.0.1 port 0): a known
// stream's counters, the scans and histograms it caused, GetReport's
// figures, and a deleted session's series gone from the next scrape.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/metrics_endpoint.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// HttpGet fetches `path` from `address` ("127.0.0.1:PORT") with HTTP/1.0
// (the server closes the connection after the body) and returns the whole
// response, headers included; every socket call has a 10 s timeout.
absl::StatusOr<std::string> HttpGet(const std::string& address,
                                    const std::string& path) {
  absl::StatusOr<ListenAddress> parsed = ParseMetricsAddress(address);
  if (!parsed.ok()) return parsed.status();
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(static_cast<uint16_t>(parsed->port));
  if (::inet_pton(AF_INET, parsed->host.c_str(), &peer.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("not IPv4: ", address));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  const timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string response;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&peer), sizeof(peer)) ==
      0) {
    const std::string request =
        absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", address, "\r\n\r\n");
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t got;
      while ((got = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) {
        response.append(buffer, static_cast<size_t>(got));
      }
    }
  }
  ::close(fd);
  if (response.empty()) {
    return absl::UnavailableError(absl::StrCat("no answer from ", address));
  }
  return response;
}

// Scrape fetches /metrics and maps every series ("name{labels}") to its
// value.
std::map<std::string, double> Scrape(const Server& server,
                                     std::string* text = nullptr) {
  absl::StatusOr<std::string> response =
      HttpGet(server.metrics_address(), "/metrics");
  EXPECT_TRUE(response.ok()) << response.status();
  if (!response.ok()) return {};
  EXPECT_THAT(response->substr(0, response->find("\r\n")),
              HasSubstr(" 200 OK"));
  std::map<std::string, double> series;
  const size_t body = response->find("\r\n\r\n");
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(*response).substr(body + 4), '\n',
                      absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line.substr(space + 1), &value)) << line;
    series[std::string(line.substr(0, space))] = value;
  }
  if (text != nullptr) *text = response->substr(body + 4);
  return series;
}

std::unique_ptr<TestServer> StartWithMetrics(ServerOptions options = {}) {
  options.metrics_listen = ParseMetricsAddress("127.0.0.1:0").value();
  absl::StatusOr<std::unique_ptr<TestServer>> server =
      TestServer::Start(Transport::kUnix, std::move(options));
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// IngestKnownStream feeds session `name` PreferLlc0Events (2 ticks of
// tgid 100, accepted) and 3 events rejected for 3 reasons.
absl::StatusOr<v1::IngestSummary> IngestKnownStream(
    const client::Client& client, const std::string& name) {
  std::vector<Sample> samples = PreferLlc0Events(100, 0);
  samples.push_back(SampleAt(30'000'000, 9, 100, 101, 10, false));  // cpu 9
  samples.push_back(SampleAt(30'000'000, 1, 0, 101, 10, false));    // tgid 0
  samples.push_back(SampleAt(5, 0, 100, 101, 10, false));  // before cpu 0's
  std::unique_ptr<client::IngestWriter> writer = client.StartIngest(name);
  for (const Sample& sample : samples) {
    if (!writer->Add(sample).ok()) break;
  }
  return writer->Finish();
}

TEST(MetricsExposition, CountersMatchTheIngestSummaryAndTheReport) {
  std::unique_ptr<TestServer> test = StartWithMetrics();
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("m")).ok());
  absl::StatusOr<v1::IngestSummary> summary =
      IngestKnownStream(*test->client, "m");
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->accepted(), 2u);
  ASSERT_EQ(summary->rejected(), 3u);
  absl::StatusOr<v1::Report> report = test->client->GetReport("m");
  ASSERT_TRUE(report.ok()) << report.status();

  std::string text;
  std::map<std::string, double> m = Scrape(*test->server, &text);
  const std::string s = "session=\"m\"";
  EXPECT_EQ(m["schedcache_sessions"], 2);  // default and m
  EXPECT_EQ(m["schedcache_ingest_events_total{" + s + ",result=\"accepted\"}"],
            2);
  EXPECT_EQ(m["schedcache_ingest_events_total{" + s + ",result=\"rejected\"}"],
            3);
  for (const char* reason : {"cpu", "ids", "timestamp"}) {
    EXPECT_EQ(m[absl::StrCat("schedcache_ingest_rejections_total{", s,
                             ",reason=\"", reason, "\"}")],
              1)
        << reason;
  }
  EXPECT_EQ(m["schedcache_ingest_rejections_total{" + s + ",reason=\"field\"}"],
            0);
  EXPECT_EQ(m["schedcache_processes_tracked{" + s + "}"], 1);  // tgid 100
  EXPECT_EQ(m["schedcache_process_evictions_total{" + s + "}"], 0);
  EXPECT_EQ(m["schedcache_watch_dropped_total{kind=\"change\"}"], 0);
  EXPECT_EQ(m["schedcache_watch_dropped_total{kind=\"scan\"}"], 0);
  EXPECT_EQ(m.count("schedcache_streams_open{kind=\"scan_watch\"}"), 1u);
  EXPECT_EQ(m["schedcache_streams_open{kind=\"watch\"}"], 0);

  // The second tick scans (PreferLlc0Events): full-scan examines all 4
  // CPUs, visited-scan only CPU 0 where the process ran; both move the
  // preference -1 -> 0; none never scans.
  const auto p = [&s](const char* policy) {
    return absl::StrCat(s, ",policy=\"", policy, "\"");
  };
  EXPECT_EQ(
      m["schedcache_scans_total{" + p("full-scan") + ",outcome=\"executed\"}"],
      1);
  EXPECT_EQ(m["schedcache_scan_cpus_sum{" + p("full-scan") + "}"], 4);
  EXPECT_EQ(m["schedcache_scan_cpus_bucket{" + p("full-scan") + ",le=\"2\"}"],
            0);
  EXPECT_EQ(m["schedcache_scan_cpus_bucket{" + p("full-scan") + ",le=\"4\"}"],
            1);
  EXPECT_EQ(m["schedcache_scan_cpus_sum{" + p("visited-scan") + "}"], 1);
  EXPECT_EQ(m["schedcache_preference_changes_total{" + p("visited-scan") + "}"],
            1);
  EXPECT_EQ(m["schedcache_scans_total{" + p("none") + ",outcome=\"executed\"}"],
            0);
  for (const v1::PolicyReport& policy : report->policies()) {
    const std::string labels = p(policy.policy().c_str());
    EXPECT_EQ(m["schedcache_scans_total{" + labels + ",outcome=\"executed\"}"],
              policy.scans());
    EXPECT_EQ(m["schedcache_scans_total{" + labels + ",outcome=\"skipped\"}"],
              policy.scans_skipped());
    EXPECT_EQ(m["schedcache_scans_total{" + labels + ",outcome=\"aborted\"}"],
              policy.scans_aborted());
    EXPECT_EQ(m["schedcache_scan_duration_seconds_count{" + labels + "}"],
              policy.scans());
    EXPECT_EQ(m["schedcache_scan_cpus_bucket{" + labels + ",le=\"+Inf\"}"],
              policy.scans());
    EXPECT_EQ(m["schedcache_preference_changes_total{" + labels + "}"],
              policy.preferred_llc_changes());
  }
  EXPECT_THAT(text, HasSubstr("# TYPE schedcache_scan_duration_seconds "
                              "histogram\n"));
  EXPECT_THAT(text, HasSubstr("schedcache_build_info{version=\""));
  EXPECT_THAT(text, Not(HasSubstr("tgid")));
}

TEST(MetricsExposition, KernelScansCountAgreementPerPolicy) {
  // After PreferLlc0Events, full-scan and visited-scan prefer LLC 0 (CPUs
  // 0-1 of the 2 x 2 topology) for tgid 100; none prefers nothing. The
  // kernel then scans twice, preferring CPU 1 (LLC 0), then CPU 2 (LLC 1):
  // the scanning policies agree once and disagree once, none disagrees
  // twice. The series are there, at 0, before any decision.
  std::unique_ptr<TestServer> test = StartWithMetrics();
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("k")).ok());
  const std::string full = R"(session="k",policy="full-scan")";
  const std::string none = R"(session="k",policy="none")";
  const auto series = [](const std::string& labels, const char* result) {
    return absl::StrCat("schedcache_kernel_scans_total{", labels,
                        ",result=\"", result, "\"}");
  };
  std::map<std::string, double> before = Scrape(*test->server, nullptr);
  ASSERT_EQ(before.count(series(full, "agree")), 1u);
  EXPECT_EQ(before[series(full, "agree")], 0);

  std::unique_ptr<client::IngestWriter> writer =
      test->client->StartIngest("k");
  for (const Sample& sample : PreferLlc0Events(100, 0)) {
    ASSERT_TRUE(writer->Add(sample).ok());
  }
  for (const auto& [ts, preferred_cpu] :
       {std::pair<int64_t, int>{30'000'000, 1}, {40'000'000, 2}}) {
    KernelDecision decision;
    decision.timestamp_ns = ts;
    decision.cpu = 0;
    decision.tgid = 100;
    decision.tid = 101;
    decision.preferred_cpu = preferred_cpu;
    decision.scanned = true;
    ASSERT_TRUE(writer->Add(decision).ok());
  }
  absl::StatusOr<v1::IngestSummary> summary = writer->Finish();
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->accepted(), 4u);

  std::map<std::string, double> m = Scrape(*test->server, nullptr);
  EXPECT_EQ(m[series(full, "agree")], 1);
  EXPECT_EQ(m[series(full, "disagree")], 1);
  EXPECT_EQ(m[series(none, "agree")], 0);
  EXPECT_EQ(m[series(none, "disagree")], 2);
}

TEST(MetricsExposition, AnAttachedWatchIsAnOpenWatchStream) {
  std::unique_ptr<TestServer> test = StartWithMetrics();
  ASSERT_NE(test, nullptr);
  // Watch returns once the server attached the stream, which it admits
  // (counts) before attaching.
  std::unique_ptr<client::PreferenceWatch> watch =
      test->client->Watch("default");
  ASSERT_TRUE(watch->attached());
  std::map<std::string, double> m = Scrape(*test->server);
  EXPECT_EQ(m["schedcache_streams_open{kind=\"watch\"}"], 1);
  EXPECT_EQ(m.count("schedcache_streams_open{kind=\"ingest\"}"), 1u);
}

// With --max_watch_queue 1, one batch of 40 scans (20 processes of
// ScanningProcessesEvents) leaves a scan watcher 38 or 39 behind (see
// watch_scans_test): the metric counts exactly the scans the stream told
// dropped, and no preference change.
TEST(MetricsExposition, ScansDroppedForASlowWatcherAreCountedByKind) {
  ServerOptions options;
  options.limits.max_watch_queue = 1;
  std::unique_ptr<TestServer> test = StartWithMetrics(std::move(options));
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("d")).ok());
  std::unique_ptr<client::ScanWatch> scans = test->client->WatchScans("d");
  ASSERT_TRUE(scans->attached());
  EXPECT_EQ(
      Scrape(*test->server)["schedcache_streams_open{kind=\"scan_watch\"}"], 1);
  // One batch whatever the machine's speed: no size or time flush before
  // Finish.
  std::unique_ptr<client::IngestWriter> writer = test->client->StartIngest(
      "d", {.max_batch_events = 1024, .max_delay = absl::Hours(1)});
  for (const Sample& sample : ScanningProcessesEvents(20, 1000)) {
    ASSERT_TRUE(writer->Add(sample).ok());
  }
  ASSERT_TRUE(writer->Finish().ok());
  ASSERT_TRUE(test->client->DeleteSession("d").ok());
  uint64_t told_dropped = 0;
  while (std::optional<v1::WatchScansResponse> event = scans->Next()) {
    told_dropped += event->dropped().count();
  }
  EXPECT_GE(told_dropped, 38u);
  std::map<std::string, double> m = Scrape(*test->server);
  EXPECT_EQ(m["schedcache_watch_dropped_total{kind=\"scan\"}"], told_dropped);
  EXPECT_EQ(m["schedcache_watch_dropped_total{kind=\"change\"}"], 0);
}

TEST(MetricsExposition, ADeletedSessionLeavesNoSeries) {
  std::unique_ptr<TestServer> test = StartWithMetrics();
  ASSERT_NE(test, nullptr);
  ASSERT_TRUE(test->client->CreateSession(TwoLlcSessionRequest("gone")).ok());
  std::string text;
  Scrape(*test->server, &text);
  EXPECT_THAT(text, HasSubstr("session=\"gone\""));
  ASSERT_TRUE(test->client->DeleteSession("gone").ok());
  std::map<std::string, double> m = Scrape(*test->server, &text);
  EXPECT_THAT(text, Not(HasSubstr("session=\"gone\"")));
  EXPECT_EQ(m["schedcache_sessions"], 1);
}

}  // namespace
}  // namespace schedcache::test_support
