// Soak test (CTest label `soak`): a real schedcached process, for about
// 40 s or kMaxRounds rounds, whichever ends first. Each round creates a
// session, attaches watches (one that reads to the end, one cancelled
// early, one on `default`), streams fresh processes into the new session
// and into `default` at once, checks every count, and deletes the session.
// The server's --max_processes is small, so eviction must bound the
// long-lived `default` session: the server's resident memory (VmRSS) may
// not grow by more than kMaxRssGrowth from the end of the second quarter of
// the rounds to the end.
#include <signal.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "schedcache/client.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

const std::string kBin = std::string(SCHEDCACHE_BINARY_DIR) + "/bin/";

constexpr int kMaxProcesses = 200;        // the server's --max_processes
constexpr int kProcessesPerRound = 1000;  // per stream, all fresh tgids
constexpr int kMaxRounds = 2000;
constexpr int kMinRounds = 8;  // quarters of at least two rounds each
constexpr absl::Duration kTimeBudget = absl::Seconds(40);
constexpr double kMaxRssGrowth = 0.20;
constexpr int64_t kMs = 1'000'000;

// ResidentKb reads VmRSS (kB) of process `pid`; 0 when it cannot.
int64_t ResidentKb(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::string digits;
    for (char c : line) {
      if (c >= '0' && c <= '9') digits.push_back(c);
    }
    int64_t kb = 0;
    return absl::SimpleAtoi(digits, &kb) ? kb : 0;
  }
  return 0;
}

// Fed is what one Ingest stream sent and what the server answered.
struct Fed {
  uint64_t events = 0;
  uint64_t processes = 0;
  absl::StatusOr<v1::IngestSummary> summary;
};

// ProcessSource makes fresh processes, one after another on CPU 0, each as
// PreferLlc0Events makes it (two ticks 20 ms apart), so that a process is
// complete before the next begins and none is evicted half-fed. tgids grow
// by 2 (each process's thread is tgid + 1) and never repeat; time never
// goes back.
class ProcessSource {
 public:
  explicit ProcessSource(int32_t first_tgid) : next_tgid_(first_tgid) {}

  // Feed sends kProcessesPerRound new processes to `session` on one Ingest
  // stream.
  Fed Feed(const client::Client& client, const std::string& session) {
    Fed fed;
    std::unique_ptr<client::IngestWriter> writer = client.StartIngest(session);
    for (int i = 0; i < kProcessesPerRound; ++i) {
      for (const Sample& sample : PreferLlc0Events(next_tgid_, clock_ns_)) {
        if (!writer->Add(sample).ok()) break;  // Finish says why
        ++fed.events;
      }
      next_tgid_ += 2;
      clock_ns_ += 20 * kMs;
      ++fed.processes;
    }
    fed.summary = writer->Finish();
    return fed;
  }

 private:
  int32_t next_tgid_;
  int64_t clock_ns_ = 1'000;
};

// WatchedChanges counts what a watch read to its end: changes a policy
// chose (plus those the server reported missed), and the changes to none
// of processes evicted at --max_processes, which the policies did not
// choose and the report does not count as theirs.
struct WatchedChanges {
  uint64_t chosen = 0;
  uint64_t evictions = 0;
};

WatchedChanges CountChanges(client::PreferenceWatch& watch) {
  WatchedChanges counted;
  while (std::optional<v1::WatchPreferencesResponse> event = watch.Next()) {
    if (!event->has_change()) continue;
    const v1::PreferenceChange& change = event->change();
    counted.chosen += change.missed_before();
    if (change.reason() == v1::NO_PREFERENCE_REASON_EVICTED) {
      ++counted.evictions;
    } else {
      ++counted.chosen;
    }
  }
  return counted;
}

// ExpectAllAccepted: the summary counts every event sent, each accepted.
void ExpectAllAccepted(const Fed& fed, absl::string_view session) {
  ASSERT_TRUE(fed.summary.ok()) << session << ": " << fed.summary.status();
  EXPECT_EQ(fed.summary->accepted(), fed.events) << session;
  EXPECT_EQ(fed.summary->rejected(), 0u) << session;
}

// ExpectReportCounts: GetReport counts the `events` applied to the session,
// none rejected, and its `processes` either tracked (at most
// --max_processes) or evicted.
void ExpectReportCounts(const v1::Report& report, uint64_t events,
                        uint64_t processes) {
  EXPECT_EQ(report.samples_applied(), events) << report.session();
  EXPECT_EQ(report.handovers_applied(), 0u) << report.session();
  EXPECT_EQ(report.events_rejected(), 0u) << report.session();
  EXPECT_LE(report.processes_tracked(), static_cast<uint64_t>(kMaxProcesses))
      << report.session();
  EXPECT_EQ(report.processes_tracked() + report.processes_evicted(), processes)
      << report.session();
}

class SoakTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // AddressSanitizer's own bookkeeping grows with the work done, not with
    // what the server holds: freed memory waits in a quarantine (256 MB by
    // default) and the stack of every allocation is kept for reports. Both
    // would bury or fake a trend in VmRSS, so the server gets a small
    // quarantine and no allocation stacks (its errors are still reported).
    // Without ASan this changes nothing.
    const char* asan_options = std::getenv("ASAN_OPTIONS");
    setenv("ASAN_OPTIONS",
           absl::StrCat(asan_options != nullptr ? asan_options : "",
                        ":quarantine_size_mb=16:malloc_context_size=0")
               .c_str(),
           /*overwrite=*/1);
    const std::string socket = "unix:" + dir_.path() + "/s.sock";
    server_ = Process::Start(
        {kBin + "schedcached", "--listen=" + socket,
         absl::StrCat("--max_processes=", kMaxProcesses)},
        dir_.path() + "/server.log");
    ASSERT_NE(server_, nullptr);
    client::Options options;
    options.address = socket;
    client_ = client::Client::Connect(options);
    ASSERT_TRUE(client_->WaitForReady().ok());
  }

  void TearDown() override {
    if (server_ == nullptr) return;
    server_->Signal(SIGTERM);
    // A sanitizer report, a leak at exit included, fails the exit code.
    EXPECT_EQ(server_->WaitForExit(absl::Seconds(30)), 0)
        << "see " << dir_.path() << "/server.log";
  }

  // Round creates session `name`, watches it (one watch reads to the end,
  // one is cancelled early) and `default` (cancelled), feeds both sessions
  // at once, checks the counts, and deletes the session.
  void Round(const std::string& name) {
    ASSERT_TRUE(client_->CreateSession(TwoLlcSessionRequest(name)).ok());
    std::unique_ptr<client::PreferenceWatch> reader = client_->Watch(name);
    std::unique_ptr<client::PreferenceWatch> brief = client_->Watch(name);
    std::unique_ptr<client::PreferenceWatch> on_default =
        client_->Watch("default");
    WatchedChanges watched;
    std::thread read_all([&] { watched = CountChanges(*reader); });
    Fed to_default;
    std::thread feed_default(
        [&] { to_default = default_source_.Feed(*client_, "default"); });
    const Fed to_session = session_source_.Feed(*client_, name);
    brief->Cancel();
    feed_default.join();
    on_default->Cancel();
    default_events_ += to_default.events;
    default_processes_ += to_default.processes;

    const absl::StatusOr<v1::Report> report = client_->GetReport(name);
    const absl::Status deleted = client_->DeleteSession(name);
    EXPECT_TRUE(deleted.ok()) << deleted;
    if (!deleted.ok()) reader->Cancel();
    read_all.join();  // the deletion ends the watch once it has drained
    EXPECT_EQ(reader->Finish().code(), absl::StatusCode::kNotFound);
    ExpectAllAccepted(to_default, "default");
    ExpectAllAccepted(to_session, name);
    ASSERT_TRUE(report.ok()) << report.status();
    ExpectReportCounts(*report, to_session.events, to_session.processes);
    // The watch that read to the end saw every change the report counts,
    // and there are some: the cache-aware policies come to prefer LLC 0 for
    // every process (PreferLlc0Events).
    uint64_t changes = 0;
    for (const v1::PolicyReport& policy : report->policies()) {
      changes += policy.preferred_llc_changes();
    }
    EXPECT_GT(changes, 0u);
    EXPECT_EQ(watched.chosen, changes);
    // Fresh tgids beyond --max_processes evict processes that had a
    // preference: each ends with a change to none, reason evicted.
    EXPECT_GT(watched.evictions, 0u);
  }

  TempDir dir_;
  std::unique_ptr<Process> server_;
  std::unique_ptr<client::Client> client_;
  // Disjoint tgid ranges; each round's session gets processes new to it.
  ProcessSource default_source_{2};
  ProcessSource session_source_{1 << 30};
  uint64_t default_events_ = 0;
  uint64_t default_processes_ = 0;
};

TEST_F(SoakTest, MemoryStaysFlatAndEveryCountIsExact) {
  std::vector<int64_t> rss_kb;  // after each round
  const absl::Time deadline = absl::Now() + kTimeBudget;
  while (static_cast<int>(rss_kb.size()) < kMaxRounds &&
         absl::Now() < deadline) {
    Round(absl::StrCat("soak-", rss_kb.size()));
    if (HasFailure()) return;
    rss_kb.push_back(ResidentKb(server_->pid()));
  }
  const int rounds = static_cast<int>(rss_kb.size());
  ASSERT_GE(rounds, kMinRounds) << "rounds too slow for the time budget";

  const absl::StatusOr<v1::Report> report = client_->GetReport("default");
  ASSERT_TRUE(report.ok()) << report.status();
  ExpectReportCounts(*report, default_events_, default_processes_);

  const int64_t first_kb = rss_kb.front();
  const int64_t warm_kb = rss_kb[rounds / 2 - 1];  // end of the second quarter
  const int64_t end_kb = rss_kb.back();
  const std::string trend =
      absl::StrCat(rounds, " rounds; server VmRSS ", first_kb,
                   " kB after round 1, ", warm_kb, " kB after round ",
                   rounds / 2, ", ", end_kb, " kB at the end");
  std::cout << trend << "\n";
  ASSERT_GT(warm_kb, 0);
  EXPECT_LE(end_kb, warm_kb * (1 + kMaxRssGrowth)) << trend;
}

}  // namespace
}  // namespace schedcache::test_support
