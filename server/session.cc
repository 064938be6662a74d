#include "server/session.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/proto_convert.h"

namespace schedcache {

absl::StatusOr<std::shared_ptr<Session>> Session::Create(
    SessionSettings settings, std::shared_ptr<const Topology> topology,
    const PolicyRegistry& registry) {
  absl::StatusOr<std::unique_ptr<Engine>> engine =
      Engine::Create(topology, registry, settings.policies, settings.options);
  if (!engine.ok()) return engine.status();
  // Not make_shared: the constructor is private.
  std::shared_ptr<Session> session(new Session(
      std::move(settings), std::move(topology), *std::move(engine)));
  return session;
}

Session::Session(SessionSettings settings,
                 std::shared_ptr<const Topology> topology,
                 std::unique_ptr<Engine> engine)
    : settings_(std::move(settings)),
      topology_(std::move(topology)),
      engine_(std::move(engine)) {
  // The listener runs inside ApplySample/Recommend, which this class only
  // calls with mu_ held.
  engine_->SetChangeListener([this](const PreferenceChange& change) {
    mu_.AssertHeld();
    OnChange(change);
  });
}

void Session::OnChange(const PreferenceChange& change) {
  if (watchers_.empty()) return;
  const v1::PreferenceChange message = ChangeToProto(change);
  for (const std::shared_ptr<PreferenceSink>& watcher : watchers_) {
    if (watcher->Enqueue(message)) to_flush_.push_back(watcher);
  }
}

std::vector<std::shared_ptr<PreferenceSink>> Session::TakeFlushes() {
  std::vector<std::shared_ptr<PreferenceSink>> flushes;
  flushes.swap(to_flush_);
  return flushes;
}

absl::Status Session::ApplyBatch(
    absl::Span<const Event> events, uint64_t unreadable,
    absl::FunctionRef<void(size_t, const absl::Status&)> on_reject) {
  std::vector<std::shared_ptr<PreferenceSink>> flushes;
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
  for (const std::shared_ptr<PreferenceSink>& watcher : flushes) {
    watcher->Flush();
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RecommendResponse> Session::Recommend(
    const RecommendRequest& request) {
  absl::StatusOr<std::vector<PolicyDecision>> decisions;
  std::vector<std::shared_ptr<PreferenceSink>> flushes;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_.ok()) return closed_;
    decisions = engine_->Recommend(request);
    flushes = TakeFlushes();
  }
  for (const std::shared_ptr<PreferenceSink>& watcher : flushes) {
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
  v1::Report out;
  {
    absl::MutexLock lock(&mu_);
    report = engine_->Report();
    rejected = events_rejected_;
    *out.mutable_collector_losses() = collector_losses_;
  }
  out.set_session(settings_.name);
  for (const PolicyReport& policy : report.policies) {
    *out.add_policies() = PolicyReportToProto(policy);
  }
  out.set_samples_applied(report.samples_applied);
  out.set_handovers_applied(report.handovers_applied);
  out.set_processes_tracked(report.processes_tracked);
  out.set_processes_evicted(report.processes_evicted);
  out.set_events_rejected(rejected);
  out.set_process_exits_applied(report.exits_applied);
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
  return out;
}

absl::Status Session::AddWatcher(std::shared_ptr<PreferenceSink> sink) {
  absl::MutexLock lock(&mu_);
  if (!closed_.ok()) return closed_;
  watchers_.push_back(std::move(sink));
  return absl::OkStatus();
}

void Session::RemoveWatcher(const PreferenceSink* sink) {
  absl::MutexLock lock(&mu_);
  std::erase_if(watchers_,
                [sink](const std::shared_ptr<PreferenceSink>& watcher) {
                  return watcher.get() == sink;
                });
}

void Session::Close(absl::Status why) {
  std::vector<std::shared_ptr<PreferenceSink>> watchers;
  {
    absl::MutexLock lock(&mu_);
    closed_ = std::move(why);
    watchers.swap(watchers_);
  }
  for (const std::shared_ptr<PreferenceSink>& watcher : watchers) {
    watcher->Close();
  }
}

}  // namespace schedcache
