#include "eval/ab/remote_session.h"

#include <unistd.h>

#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "schedcache/client.h"

namespace schedcache::ab {
namespace {

Distribution FromProto(const v1::Distribution& d) {
  return Distribution{d.count(), d.mean(), d.p50(), d.p99(), d.max()};
}

EngineReport FromProto(const v1::Report& report) {
  EngineReport out;
  for (const v1::PolicyReport& p : report.policies()) {
    PolicyReport& r = out.policies.emplace_back();
    r.name = p.policy();
    r.scans = p.scans();
    r.scans_skipped = p.scans_skipped();
    r.scans_skipped_disabled = p.scans_skipped_disabled();
    r.scans_aborted = p.scans_aborted();
    r.cpus_scanned = FromProto(p.cpus_scanned());
    r.llcs_scanned = FromProto(p.llcs_scanned());
    r.scan_ns = FromProto(p.scan_ns());
    r.decisions = p.decisions();
    r.agreements = p.agreements();
    if (p.has_agreement()) r.agreement = p.agreement();
    r.preferred_llc_changes = p.preferred_llc_changes();
    r.runtime_on_preferred_llc = p.runtime_on_preferred_llc();
  }
  out.samples_applied = report.samples_applied();
  out.handovers_applied = report.handovers_applied();
  out.processes_tracked = report.processes_tracked();
  out.processes_evicted = report.processes_evicted();
  out.exits_applied = report.process_exits_applied();
  return out;
}

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

class RemoteSession : public AbSession {
 public:
  RemoteSession(std::unique_ptr<client::Client> client, v1::Session session,
                AbObserver& observer)
      : client_(std::move(client)),
        session_(std::move(session)),
        observer_(observer),
        watch_(client_->Watch(session_.name())),
        writer_(client_->StartIngest(session_.name())) {
    reader_ = std::thread([this] {
      while (std::optional<v1::WatchPreferencesResponse> event =
                 watch_->Next()) {
        if (event->has_change()) log_.Add(std::move(*event->mutable_change()));
      }
    });
  }

  ~RemoteSession() override {
    if (!reader_.joinable()) return;
    watch_->Cancel();
    reader_.join();
    client_->DeleteSession(session_.name()).IgnoreError();
  }

  absl::Status OnSample(const Sample& sample) override {
    return writer_->Add(sample);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return writer_->Add(hand_over);
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return writer_->Add(exit);
  }

  absl::StatusOr<SessionOutcome> Finish() override {
    absl::StatusOr<v1::IngestSummary> summary = writer_->Finish();
    absl::StatusOr<v1::Report> report =
        summary.ok() ? client_->GetReport(session_.name())
                     : absl::StatusOr<v1::Report>(summary.status());
    // Deleting the session ends the watch once every change is sent.
    const absl::Status deleted = client_->DeleteSession(session_.name());
    if (!deleted.ok()) watch_->Cancel();
    reader_.join();
    RETURN_IF_ERROR(report.status());
    RETURN_IF_ERROR(deleted);
    SessionOutcome outcome;
    outcome.report = FromProto(*report);
    outcome.deferred_rejections = summary->rejected();
    for (const v1::Rejection& rejection : summary->first_rejections()) {
      outcome.first_deferred.push_back(
          DeferredRejection{rejection.index(), rejection.reason()});
    }
    uint64_t missed = 0;
    for (const v1::PreferenceChange& c : log_.Take(missed)) {
      // The collector reads LLCs only, so the CPU and reason stay unset.
      observer_.OnPreferenceChange(PreferenceChange{.tgid = c.tgid(),
                                                    .policy = c.policy(),
                                                    .old_llc = c.old_llc(),
                                                    .new_llc = c.new_llc(),
                                                    .timestamp_ns =
                                                        c.timestamp_ns()});
    }
    if (missed > 0) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the server dropped ", missed,
          " preference changes for this slow watcher (schedcached "
          "--max_watch_queue); the per-process results would be wrong"));
    }
    return outcome;
  }

  // The server applies the events as its ingest stream delivers them, and
  // that stream ends only in Finish, which also deletes the session.
  absl::StatusOr<std::vector<PolicyDecision>> LastScan(int32_t) override {
    return absl::UnimplementedError(
        "a server session answers for the last scan only after its events, "
        "which stream until the session is finished and deleted");
  }
  bool reports_scans() const override { return false; }
  bool enabled() const override { return session_.enabled(); }

 private:
  std::unique_ptr<client::Client> client_;
  const v1::Session session_;
  AbObserver& observer_;
  std::unique_ptr<client::PreferenceWatch> watch_;
  std::unique_ptr<client::IngestWriter> writer_;
  ChangeLog log_;
  std::thread reader_;
};

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
  return std::unique_ptr<AbSession>(std::make_unique<RemoteSession>(
      std::move(client), std::move(session), observer));
}

}  // namespace schedcache::ab
