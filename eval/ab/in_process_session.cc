#include "eval/ab/in_process_session.h"

#include <string>
#include <utility>

#include "api/session_config.h"
#include "common/status_macros.h"
#include "policies/session_settings.h"
#include "schedcache/session_request.h"

namespace schedcache::ab {
namespace {

// The in-process session's name, as SessionSettings holds one; never shown.
constexpr char kSessionName[] = "ab";

class InProcessSession : public AbSession {
 public:
  explicit InProcessSession(std::unique_ptr<Engine> engine)
      : engine_(std::move(engine)) {}

  absl::Status OnSample(const Sample& sample) override {
    return engine_->ApplySample(sample);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return engine_->ApplyHandOver(hand_over);
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return engine_->ApplyProcessExit(exit);
  }
  absl::Status OnProcessStart(const ProcessStart& start) override {
    return engine_->ApplyProcessStart(start);
  }
  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    return engine_->ApplyKernelDecision(decision);
  }
  absl::StatusOr<SessionOutcome> Finish() override {
    // Every refusal was returned by an On* call: none is deferred.
    return SessionOutcome{engine_->Report(), 0, {}};
  }
  bool reports_scans() const override { return true; }
  bool enabled() const override { return engine_->enabled(); }

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace

absl::StatusOr<SessionSettings> ResolveSessionSettings(
    const client::SessionSpec& config, const PolicyRegistry& registry) {
  SessionChoices choices;
  choices.policies = config.policies;
  for (const std::string& setting : config.settings) {
    ASSIGN_OR_RETURN(client::SessionSettingText text,
                     client::SplitSessionSetting(setting));
    choices.tunables.push_back(
        TunableSetting{std::move(text.name), std::move(text.value)});
  }
  ASSIGN_OR_RETURN(const v1::ScanTrigger trigger,
                   client::ParseScanTrigger(config.trigger));
  choices.trigger = ScanTriggerFromProto(trigger);
  return ResolveSessionChoices(kSessionName, choices, registry,
                               EngineOptions{}.max_processes);
}

absl::StatusOr<std::unique_ptr<AbSession>> MakeInProcessSession(
    std::shared_ptr<const Topology> topology, const client::SessionSpec& config,
    const PolicyRegistry& registry, AbObserver& observer) {
  ASSIGN_OR_RETURN(SessionSettings settings,
                   ResolveSessionSettings(config, registry));
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                   Engine::Create(std::move(topology), registry,
                                  std::move(settings.policies),
                                  settings.options));
  engine->SetChangeListener(
      [&observer](const PreferenceChange& change) {
        observer.OnPreferenceChange(change);
      });
  engine->SetScanListener([&observer](const ScanObservation& scan) {
    observer.OnScan(scan);
  });
  return std::unique_ptr<AbSession>(
      std::make_unique<InProcessSession>(std::move(engine)));
}

}  // namespace schedcache::ab
