#include "eval/ab/remote_session.h"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "api/proto_convert.h"
#include "common/status_macros.h"
#include "schedcache/client.h"

namespace schedcache::ab {
namespace {

// ChangeLog is what the reader thread collects from the watch stream.
class ChangeLog {
 public:
  void Add(v1::PreferenceChange change) {
    absl::MutexLock lock(&mu_);
    missed_ += change.missed_before();
    changes_.push_back(std::move(change));
  }
  // Take returns everything collected. REQUIRES: the reader has stopped.
  std::vector<v1::PreferenceChange> Take(uint64_t& missed) {
    absl::MutexLock lock(&mu_);
    missed = missed_;
    return std::move(changes_);
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::PreferenceChange> changes_ ABSL_GUARDED_BY(mu_);
  uint64_t missed_ ABSL_GUARDED_BY(mu_) = 0;
};

// ScanLog is what the scan reader thread collects from the WatchScans
// stream until the feeding thread takes it.
class ScanLog {
 public:
  void Add(v1::WatchScansResponse event) {
    absl::MutexLock lock(&mu_);
    if (event.has_dropped()) dropped_ += event.dropped().count();
    if (event.has_scan()) scans_.push_back(std::move(*event.mutable_scan()));
  }
  // Take returns the scans collected since the last Take.
  std::vector<v1::ScanEvent> Take() {
    absl::MutexLock lock(&mu_);
    return std::exchange(scans_, {});
  }
  uint64_t dropped() const {
    absl::MutexLock lock(&mu_);
    return dropped_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<v1::ScanEvent> scans_ ABSL_GUARDED_BY(mu_);
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

// kScanDeliveryEvents is how many events pass between hand-overs of the
// collected scans to the observer, so they never pile up for a long input.
constexpr uint64_t kScanDeliveryEvents = 16384;

class RemoteSession : public AbSession {
 public:
  // `scans` (null: scans not wanted) is attached to the session already.
  RemoteSession(std::unique_ptr<client::Client> client, v1::Session session,
                std::unique_ptr<client::ScanWatch> scans, AbObserver& observer)
      : client_(std::move(client)),
        session_(std::move(session)),
        observer_(observer),
        watch_(client_->Watch(session_.name())),
        scan_watch_(std::move(scans)),
        writer_(client_->StartIngest(session_.name())) {
    reader_ = std::thread([this] {
      while (std::optional<v1::WatchPreferencesResponse> event =
                 watch_->Next()) {
        if (event->has_change()) log_.Add(std::move(*event->mutable_change()));
      }
    });
    if (scan_watch_ == nullptr) return;
    scan_reader_ = std::thread([this] {
      while (std::optional<v1::WatchScansResponse> event =
                 scan_watch_->Next()) {
        scan_log_.Add(*std::move(event));
      }
    });
  }

  ~RemoteSession() override {
    if (!reader_.joinable()) return;
    StopReaders();
    client_->DeleteSession(session_.name()).IgnoreError();
  }

  absl::Status OnSample(const Sample& sample) override {
    return Given(writer_->Add(sample));
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return Given(writer_->Add(hand_over));
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return Given(writer_->Add(exit));
  }
  absl::Status OnProcessStart(const ProcessStart& start) override {
    return Given(writer_->Add(start));
  }
  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    return Given(writer_->Add(decision));
  }

  absl::StatusOr<SessionOutcome> Finish() override {
    absl::StatusOr<v1::IngestSummary> summary = writer_->Finish();
    absl::StatusOr<v1::Report> report =
        summary.ok() ? client_->GetReport(session_.name())
                     : absl::StatusOr<v1::Report>(summary.status());
    // Deleting the session ends the watches once every change and scan is
    // sent: that is how this side knows it has them all.
    const absl::Status deleted = client_->DeleteSession(session_.name());
    if (deleted.ok()) {
      JoinReaders();
    } else {
      StopReaders();
    }
    RETURN_IF_ERROR(report.status());
    RETURN_IF_ERROR(deleted);
    if (scan_watch_ != nullptr) RETURN_IF_ERROR(DeliverLastScans(*report));
    SessionOutcome outcome;
    outcome.report = ReportFromProto(*report);
    outcome.deferred_rejections = summary->rejected();
    for (const v1::Rejection& rejection : summary->first_rejections()) {
      outcome.first_deferred.push_back(
          DeferredRejection{rejection.index(), rejection.reason()});
    }
    uint64_t missed = 0;
    for (const v1::PreferenceChange& c : log_.Take(missed)) {
      observer_.OnPreferenceChange(ChangeFromProto(c));
    }
    if (missed > 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the server dropped ", missed,
          " preference changes for this slow watcher (schedcached "
          "--max_watch_queue); the per-process results would be wrong"));
    }
    return outcome;
  }

  bool reports_scans() const override { return scan_watch_ != nullptr; }
  bool enabled() const override { return session_.enabled(); }

 private:
  // Given counts an event handed to the writer and, every
  // kScanDeliveryEvents, hands the scans collected so far to the observer.
  absl::Status Given(absl::Status added) {
    if (scan_watch_ != nullptr && ++events_given_ % kScanDeliveryEvents == 0) {
      DeliverScans();
    }
    return added;
  }

  void DeliverScans() {
    for (const v1::ScanEvent& scan : scan_log_.Take()) {
      const auto policy = std::find(session_.policies().begin(),
                                    session_.policies().end(), scan.policy());
      observer_.OnScan(ScanFromProto(
          scan, static_cast<int>(policy - session_.policies().begin()),
          occupancy_));
      ++scans_delivered_;
    }
  }

  // DeliverLastScans hands over the rest of the scans once the stream
  // ended, and checks that it ended as a deleted session's does, with
  // every scan of `report` delivered. REQUIRES: the readers have stopped.
  absl::Status DeliverLastScans(const v1::Report& report) {
    DeliverScans();
    const absl::Status ended = scan_watch_->Finish();
    if (!absl::IsNotFound(ended)) {
      return absl::Status(ended.code(),
                          absl::StrCat("the server's scan stream broke before "
                                       "the session ended: ",
                                       ended.message()));
    }
    if (const uint64_t dropped = scan_log_.dropped(); dropped > 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the server dropped ", dropped,
          " scans for this slow watcher (schedcached --max_watch_queue); the "
          "scan trace would miss them"));
    }
    uint64_t executed = 0;
    for (const v1::PolicyReport& policy : report.policies()) {
      executed += policy.scans();
    }
    if (executed != scans_delivered_) {
      return absl::DataLossError(
          absl::StrCat("the server's scan stream delivered ", scans_delivered_,
                       " scans; the session executed ", executed));
    }
    return absl::OkStatus();
  }

  void JoinReaders() {
    reader_.join();
    if (scan_reader_.joinable()) scan_reader_.join();
  }
  void StopReaders() {
    watch_->Cancel();
    if (scan_watch_ != nullptr) scan_watch_->Cancel();
    JoinReaders();
  }

  std::unique_ptr<client::Client> client_;
  const v1::Session session_;
  AbObserver& observer_;
  std::unique_ptr<client::PreferenceWatch> watch_;
  std::unique_ptr<client::ScanWatch> scan_watch_;  // null: scans not wanted
  std::unique_ptr<client::IngestWriter> writer_;
  ChangeLog log_;
  ScanLog scan_log_;
  std::thread reader_;
  std::thread scan_reader_;
  uint64_t events_given_ = 0;
  uint64_t scans_delivered_ = 0;
  // The occupancy of the scan DeliverScans is handing over (the
  // observation holds a view of it).
  std::vector<LlcOccupancy> occupancy_;
};

// WatchScans opens the scan stream of the new session `name` when
// `observer` wants scans (nullptr otherwise). A server that refuses it
// (one without WatchScans answers Unimplemented) fails the session.
absl::StatusOr<std::unique_ptr<client::ScanWatch>> WatchScans(
    const client::Client& client, const std::string& name,
    const AbObserver& observer) {
  if (!observer.wants_scans()) return nullptr;
  std::unique_ptr<client::ScanWatch> scans = client.WatchScans(name);
  if (scans->attached()) return scans;
  while (scans->Next().has_value()) {
  }
  const absl::Status refused = scans->Finish();
  return absl::Status(refused.code(),
                      absl::StrCat("the server refused to stream the scans of "
                                   "session ", name, ": ", refused.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<AbSession>> MakeRemoteSession(
    const std::string& address, const client::SessionSpec& config,
    AbObserver& observer) {
  client::Options options;
  options.address = address;
  std::unique_ptr<client::Client> client = client::Client::Connect(options);
  const std::string name =
      absl::StrCat("ab-", getpid(), "-", absl::GetCurrentTimeNanos());
  ASSIGN_OR_RETURN(const v1::CreateSessionRequest request,
                   client::BuildCreateSessionRequest(config, name));
  ASSIGN_OR_RETURN(v1::Session session, client->CreateSession(request));
  absl::StatusOr<std::unique_ptr<client::ScanWatch>> scans =
      WatchScans(*client, name, observer);
  if (!scans.ok()) {
    client->DeleteSession(name).IgnoreError();
    return scans.status();
  }
  return std::unique_ptr<AbSession>(std::make_unique<RemoteSession>(
      std::move(client), std::move(session), *std::move(scans), observer));
}

}  // namespace schedcache::ab
