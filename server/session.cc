#include "server/session.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/proto_convert.h"
#include "api/session_config.h"
#include "common/status_macros.h"

namespace schedcache {

absl::StatusOr<std::shared_ptr<Session>> Session::Create(
    SessionSettings settings, std::shared_ptr<const Topology> topology,
    const PolicyRegistry& registry, int watch_history) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Engine::Create(topology, registry, settings.policies, settings.options);
  if (!engine.ok()) return engine.status();
  // 0 is no incarnation (WatchPreferencesRequest: no resume), so it is
  // never drawn.
  absl::BitGen random;
  const uint64_t incarnation = absl::Uniform<uint64_t>(
      absl::IntervalClosed, random, 1, std::numeric_limits<uint64_t>::max());
  // Not make_shared: the constructor is private.
  std::shared_ptr<Session> session(
      new Session(std::move(settings), std::move(topology),
                  *std::move(engine), incarnation, watch_history));
  return session;
}

Session::Session(SessionSettings settings,
                 std::shared_ptr<const Topology> topology,
                 std::unique_ptr<Engine> engine, uint64_t incarnation,
                 int watch_history)
    : settings_(std::move(settings)),
      topology_(std::move(topology)),
      incarnation_(incarnation),
      watch_history_(static_cast<size_t>(watch_history)),
      engine_(std::move(engine)) {
  // The listener runs inside ApplySample/Recommend, which this class only
  // calls with mu_ held.
  engine_->SetChangeListener([this](const PreferenceChange& change) {
    mu_.AssertHeld();
    OnChange(change);
  });
}

void Session::OnChange(const PreferenceChange& change) {
  // Numbered and retained even without watchers: a watcher whose stream
  // broke resumes from the history.
  v1::PreferenceChange message = ChangeToProto(change);
  message.set_sequence(++last_sequence_);
  message.set_incarnation(incarnation_);
  for (const Watcher& watcher : watchers_) {
    if (watcher.filter.Matches(change.tgid, change.policy) &&
        watcher.sink->Enqueue(message)) {
      to_flush_.push_back(watcher.sink);
    }
  }
  if (watch_history_ == 0) return;
  if (history_.size() == watch_history_) history_.pop_front();
  history_.push_back(std::move(message));
}

void Session::OnScan(const ScanObservation& scan) {
  const std::string& policy = settings_.policies[scan.policy].name;
  std::optional<v1::ScanEvent> message;  // built for the first match only
  for (const ScanWatcher& watcher : scan_watchers_) {
    if (!watcher.filter.Matches(scan.tgid, policy)) continue;
    if (!message.has_value()) message = ScanToProto(scan, policy);
    if (watcher.sink->Enqueue(*message)) to_flush_.push_back(watcher.sink);
  }
}

std::vector<std::shared_ptr<StreamSink>> Session::TakeFlushes() {
  std::vector<std::shared_ptr<StreamSink>> flushes;
  flushes.swap(to_flush_);
  return flushes;
}

absl::Status Session::ApplyBatch(
    absl::Span<const Event> events, uint64_t unreadable,
    absl::FunctionRef<void(size_t, const absl::Status&)> on_reject) {
  std::vector<std::shared_ptr<StreamSink>> flushes;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_.ok()) return closed_;
    const uint64_t applied = engine_->ApplyBatch(
        events, [&](size_t index, const absl::Status& error) {
          mu_.AssertHeld();  // the engine calls back inside this scope
          ++rejections_[static_cast<size_t>(RejectionReasonOf(error))];
          on_reject(index, error);
        });
    events_accepted_ += applied;
    events_rejected_ += events.size() - applied + unreadable;
    // The batch decoder's only unreadable row is one of unknown kind.
    rejections_[static_cast<size_t>(RejectionReason::kKind)] += unreadable;
    flushes = TakeFlushes();
  }
  for (const std::shared_ptr<StreamSink>& watcher : flushes) {
    watcher->Flush();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RecommendResponse> Session::Recommend(
    const RecommendRequest& request) {
  absl::StatusOr<std::vector<PolicyDecision>> decisions;
  std::vector<std::shared_ptr<StreamSink>> flushes;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_.ok()) return closed_;
    decisions = engine_->Recommend(request);
    flushes = TakeFlushes();
  }
  for (const std::shared_ptr<StreamSink>& watcher : flushes) {
    watcher->Flush();
  }
  if (!decisions.ok()) return decisions.status();
  return RecommendResponseToProto(request.tgid, *decisions);
}

void Session::AddCollectorLosses(const v1::CollectorLosses& losses) {
  absl::MutexLock lock(&mu_);
  v1::CollectorLosses& total = collector_losses_;
  total.set_ring_buffer_lost(total.ring_buffer_lost() +
                             losses.ring_buffer_lost());
  total.set_unparsed(total.unparsed() + losses.unparsed());
  total.set_late(total.late() + losses.late());
}

v1::Report Session::Report() const {
  EngineReport report;
  uint64_t rejected = 0;
  v1::CollectorLosses losses;
  {
    absl::MutexLock lock(&mu_);
    report = engine_->Report();
    rejected = events_rejected_;
    losses = collector_losses_;
  }
  v1::Report out = ReportToProto(report);
  out.set_session(settings_.name);
  out.set_events_rejected(rejected);
  *out.mutable_collector_losses() = std::move(losses);
  return out;
}

SessionStats Session::Stats() const {
  SessionStats stats;
  stats.name = settings_.name;
  absl::MutexLock lock(&mu_);
  stats.events_accepted = events_accepted_;
  stats.events_rejected = events_rejected_;
  stats.rejections = rejections_;
  stats.processes_tracked = engine_->processes_tracked();
  stats.processes_evicted = engine_->processes_evicted();
  engine_->ForEachPolicyStats(
      [&stats](std::string_view name, const PolicyStats& policy) {
        stats.policies.push_back({std::string(name), policy});
      });
  return stats;
}

v1::Session Session::Describe() const {
  v1::Session out;
  out.set_name(settings_.name);
  // This server reads EventColumns' fixed-width form and keeps each
  // stream's comms (server/ingest_stream.h, StreamComms).
  out.set_takes_fixed_width_columns(true);
  out.set_topology_source(topology_->source());
  out.set_topology_summary(topology_->Summary());
  for (const PolicyChoice& policy : settings_.policies) {
    out.add_policies(policy.name);
  }
  out.set_trigger(ScanTriggerToProto(settings_.options.trigger));
  const auto add_tunable = [&out](const std::string& name, int64_t value) {
    v1::TunableSetting* setting = out.add_tunables();
    setting->set_name(name);
    setting->set_value(absl::StrCat(value));
  };
  settings_.options.model.ForEachValue(
      [&add_tunable](const TunableSpec& spec, int64_t value) {
        add_tunable(spec.name, value);
      });
  for (const PolicyChoice& policy : settings_.policies) {
    for (const auto& [name, value] : policy.tunables) {
      add_tunable(absl::StrCat(policy.name, ".", name), value);
    }
  }
  absl::MutexLock lock(&mu_);
  out.set_enabled(engine_->enabled());
  out.set_events_accepted(events_accepted_);
  out.set_events_rejected(events_rejected_);
  out.set_processes_tracked(engine_->processes_tracked());
  out.set_incarnation(incarnation_);
  return out;
}

absl::Status Session::AddWatcher(std::shared_ptr<PreferenceSink> sink,
                                 const WatchSpec& spec) {
  bool flush = false;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_.ok()) return closed_;
    absl::StatusOr<std::vector<v1::WatchPreferencesResponse>> start =
        WatchStart(spec);
    if (!start.ok()) return start.status();
    flush = sink->EnqueueStart(*std::move(start));
    watchers_.push_back(Watcher{sink, spec.filter});
  }
  if (flush) sink->Flush();
  return absl::OkStatus();
}

absl::Status Session::CheckFilterPolicy(const WatchFilter& filter) const {
  const std::string& policy = filter.policy;
  if (!policy.empty() &&
      std::none_of(settings_.policies.begin(), settings_.policies.end(),
                   [&policy](const PolicyChoice& choice) {
                     return choice.name == policy;
                   })) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy \"", absl::CEscape(policy),
                     "\" is not a policy of session \"", name(), "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::WatchPreferencesResponse>> Session::WatchStart(
    const WatchSpec& spec) const {
  if (absl::Status policy = CheckFilterPolicy(spec.filter); !policy.ok()) {
    return policy;
  }
  if (spec.resume_incarnation == 0) {
    if (!spec.snapshot) {
      return std::vector<v1::WatchPreferencesResponse>{SyncedAtLast()};
    }
    return Snapshot(v1::SNAPSHOT_CAUSE_REQUESTED, spec.filter);
  }
  if (spec.resume_incarnation != incarnation_) {
    return Snapshot(v1::SNAPSHOT_CAUSE_INCARNATION_CHANGED, spec.filter);
  }
  if (spec.resume_after_sequence > last_sequence_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resume_after_sequence ", spec.resume_after_sequence,
        " is beyond the latest sequence ", last_sequence_, " of session \"",
        name(), "\" (incarnation ", incarnation_, ")"));
  }
  if (!ReplayFrom(spec.resume_after_sequence)) {
    return Snapshot(v1::SNAPSHOT_CAUSE_HISTORY_GONE, spec.filter);
  }
  std::vector<v1::WatchPreferencesResponse> replay;
  for (const v1::PreferenceChange& change : history_) {
    if (change.sequence() > spec.resume_after_sequence &&
        spec.filter.Matches(change.tgid(), change.policy())) {
      *replay.emplace_back().mutable_change() = change;
    }
  }
  replay.push_back(SyncedAtLast());
  return replay;
}

bool Session::ReplayFrom(uint64_t sequence) const {
  // Sequences are consecutive, so the history holds every change after
  // `sequence` when it reaches back to the one just after it.
  const uint64_t oldest_retained =
      history_.empty() ? last_sequence_ + 1 : history_.front().sequence();
  return sequence + 1 >= oldest_retained;
}

std::vector<v1::WatchPreferencesResponse> Session::Snapshot(
    v1::SnapshotCause cause, const WatchFilter& filter) const {
  std::vector<v1::WatchPreferencesResponse> snapshot(1);
  const int64_t now = engine_->now();
  // Read under mu_ here: the analysis does not see that the lambda runs
  // within this call, with mu_ still held.
  const uint64_t sequence = last_sequence_;
  engine_->ForEachPreference([&](const CurrentPreference& current) {
    const std::string& policy = settings_.policies[current.policy].name;
    if (!filter.Matches(current.tgid, policy)) return;
    // An entry reads as a change from none to the current preference.
    v1::PreferenceChange& entry = *snapshot.emplace_back().mutable_change();
    entry = ChangeToProto(PreferenceChange{
        current.tgid, policy, -1, current.preference.llc,
        current.preference.cpu, current.preference.reason, now,
        current.cache_group});
    entry.set_sequence(sequence);
    entry.set_incarnation(incarnation_);
    entry.set_snapshot(true);
  });
  v1::SnapshotStart& start = *snapshot.front().mutable_snapshot_start();
  start.set_cause(cause);
  start.set_incarnation(incarnation_);
  start.set_entries(snapshot.size() - 1);
  snapshot.push_back(SyncedAtLast());
  return snapshot;
}

v1::WatchPreferencesResponse Session::SyncedAtLast() const {
  v1::WatchPreferencesResponse synced;
  synced.mutable_synced()->set_sequence(last_sequence_);
  synced.mutable_synced()->set_incarnation(incarnation_);
  return synced;
}

void Session::RemoveWatcher(const PreferenceSink* sink) {
  absl::MutexLock lock(&mu_);
  std::erase_if(watchers_, [sink](const Watcher& watcher) {
    return watcher.sink.get() == sink;
  });
}

absl::Status Session::AddScanWatcher(std::shared_ptr<ScanSink> sink,
                                     WatchFilter filter) {
  RETURN_IF_ERROR(CheckFilterPolicy(filter));
  absl::MutexLock lock(&mu_);
  if (!closed_.ok()) return closed_;
  if (scan_watchers_.empty()) {
    // The listener runs inside ApplyBatch/Recommend, with mu_ held.
    engine_->SetScanListener([this](const ScanObservation& scan) {
      mu_.AssertHeld();
      OnScan(scan);
    });
  }
  scan_watchers_.push_back(ScanWatcher{std::move(sink), std::move(filter)});
  return absl::OkStatus();
}

void Session::RemoveScanWatcher(const ScanSink* sink) {
  absl::MutexLock lock(&mu_);
  std::erase_if(scan_watchers_, [sink](const ScanWatcher& watcher) {
    return watcher.sink.get() == sink;
  });
  // Unwatched, a scan is reported to nobody, at no cost.
  if (scan_watchers_.empty()) engine_->SetScanListener(nullptr);
}

void Session::Close(absl::Status why) {
  std::vector<Watcher> watchers;
  std::vector<ScanWatcher> scan_watchers;
  {
    absl::MutexLock lock(&mu_);
    closed_ = why;
    watchers.swap(watchers_);
    scan_watchers.swap(scan_watchers_);
    engine_->SetScanListener(nullptr);
  }
  for (const Watcher& watcher : watchers) watcher.sink->Close(why);
  for (const ScanWatcher& watcher : scan_watchers) watcher.sink->Close(why);
}

}  // namespace schedcache
