#include "policies/engine.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "policies/engine_impl.h"

namespace schedcache {
namespace {

absl::Status ValidateOptions(const EngineOptions& options) {
  RETURN_IF_ERROR(
      ValidateTunables(ModelTunables::Specs(), options.model.ToValues()));
  if (options.max_processes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_processes = ", options.max_processes, " must be at least 1"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Engine::Impl::ValidateRecommendTime(int64_t timestamp_ns) const {
  if (timestamp_ns == 0 ||
      (timestamp_ns >= now_ &&
       timestamp_ns - now_ <= options_.model.max_clock_jump_ns)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "timestamp_ns ", timestamp_ns, " is outside [", now_, ", ",
      now_ + options_.model.max_clock_jump_ns,
      "]: the session clock and max_clock_jump_ns past it (0 means the "
      "clock)"));
}

void Engine::Impl::ForEachPreference(
    absl::FunctionRef<void(const CurrentPreference&)> fn) const {
  for (uint32_t slot = 0; slot < slots_prepared_; ++slot) {
    const ProcessState& p = processes_.process(slot);
    if (!p.started) continue;
    for (size_t i = 0; i < policies_.size(); ++i) {
      fn(CurrentPreference{p.tgid, static_cast<int>(i),
                           policies_[i].policy->CurrentPreference(p.group),
                           p.cache_group});
    }
  }
}

absl::StatusOr<std::vector<PolicyDecision>> Engine::Impl::Recommend(
    const RecommendRequest& request) {
  const uint32_t slot = processes_.Find(request.tgid);
  if (slot == ProcessTable::kNoSlot) {
    return absl::NotFoundError(
        absl::StrCat("process tgid ", request.tgid, " is not tracked"));
  }
  const ProcessState& p = processes_.process(slot);
  const int32_t tid = request.tid.value_or(p.last_tid);
  const ThreadState* known = processes_.FindThread(slot, tid);
  if (known == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tid ", tid, " is not a known thread of process ", request.tgid));
  }
  if (known->cpu < 0) {
    // A thread of a ProcessStart that has not run yet: no CPU to scan on.
    return absl::FailedPreconditionError(absl::StrCat(
        "tid ", tid, " of process ", request.tgid, " has not run yet"));
  }
  ThreadRef thread{tid, known->numa_node, known->cpu};
  if (request.cpu.has_value()) {
    if (!context_.topology().HasCpu(*request.cpu) ||
        !context_.online().Test(*request.cpu)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu ", *request.cpu, " is not an online CPU"));
    }
    thread.cpu = *request.cpu;
  }
  RETURN_IF_ERROR(ValidateRecommendTime(request.timestamp_ns));
  outcomes_.assign(policies_.size(), ScanOutcome{});
  // A scan request stands in for the tick (docs/MODEL.md): decay the thread's
  // CPU, raise the group's epoch to that CPU's (never lower it), scan.
  // The group's record is final before the scan, so one ProcessRef
  // serves the scan and the decisions, which are the group's.
  const uint32_t group = p.group;
  int64_t now = now_;
  if (request.scan) {
    now = Clock(request.timestamp_ns != 0 ? request.timestamp_ns : now_);
    context_.Advance(thread.cpu, jiffies_);
    ProcessState& state = processes_.process(group);
    state.epoch = std::max(state.epoch, context_.rq(thread.cpu).cpu_epoch);
  }
  const ProcessRef process = processes_.RefOf(group);
  if (request.scan) {
    const int64_t jiffies = jiffies_;
    RunTrigger(slot, group, thread, now, [&](Policy& policy) {
      return policy.Scan(process, thread, jiffies);
    });
  }
  std::vector<PolicyDecision> decisions;
  for (size_t i = 0; i < policies_.size(); ++i) {
    PolicyDecision d = policies_[i].policy->Decide(
        process, request.tid.has_value() ? &thread : nullptr);
    d.policy = policies_[i].name;
    d.nr_threads = process.nr_threads;
    d.footprint_pages = process.footprint_pages;
    d.cache_group = p.cache_group;
    d.scanned_now = outcomes_[i].kind == ScanOutcome::Kind::kExecuted;
    decisions.push_back(std::move(d));
  }
  return decisions;
}

KernelProcessReport Engine::Impl::KernelReportOf(uint32_t slot) const {
  KernelProcessReport report;
  report.tgid = processes_.process(slot).tgid;
  for (const PolicySlot& policy : policies_) {
    report.policies.push_back(policy.kernel[slot]);
  }
  return report;
}

EngineReport Engine::Impl::Report() const {
  EngineReport report;
  for (const PolicySlot& policy : policies_) {
    report.policies.push_back(policy.stats.Summarize(policy.name));
  }
  report.samples_applied = samples_applied_;
  report.handovers_applied = handovers_applied_;
  report.exits_applied = exits_applied_;
  report.starts_applied = starts_applied_;
  report.processes_tracked = processes_.size();
  report.processes_evicted = processes_evicted_;
  report.kernel_decisions_applied = kernel_decisions_applied_;
  report.kernel_decisions_unmatched = kernel_decisions_unmatched_;
  for (uint32_t slot = 0; slot < slots_prepared_; ++slot) {
    if (kernel_seen_[slot]) {
      report.kernel_processes.push_back(KernelReportOf(slot));
    }
  }
  report.kernel_processes.insert(report.kernel_processes.end(),
                                 ended_kernel_processes_.begin(),
                                 ended_kernel_processes_.end());
  report.cache_groups = GroupRuntimes();
  report.cache_groups_left_out = group_runtimes_left_out_;
  return report;
}

absl::StatusOr<std::unique_ptr<Engine>> Engine::Create(
    std::shared_ptr<const Topology> topology, const PolicyRegistry& registry,
    std::vector<PolicyChoice> policies, EngineOptions options) {
  if (topology == nullptr) {
    return absl::InvalidArgumentError("engine needs a topology");
  }
  if (policies.empty()) {
    return absl::InvalidArgumentError("a session needs at least one policy");
  }
  RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>(std::move(topology), options);
  absl::flat_hash_set<std::string> seen;
  for (const PolicyChoice& choice : policies) {
    const PolicyFactory* factory = registry.Find(choice.name);
    if (factory == nullptr) {
      std::vector<std::string> known;
      for (const PolicyFactory* f : registry.factories()) {
        known.emplace_back(f->name());
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy '", choice.name,
                       "'; known: ", absl::StrJoin(known, ", ")));
    }
    if (!seen.insert(choice.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("policy '", choice.name, "' is listed twice"));
    }
    RETURN_IF_ERROR(impl->AddPolicy(*factory, choice.tunables));
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

absl::StatusOr<std::vector<PolicyDecision>> Engine::Recommend(
    const RecommendRequest& request) {
  return impl_->Recommend(request);
}
EngineReport Engine::Report() const { return impl_->Report(); }
uint64_t Engine::processes_tracked() const {
  return impl_->processes_tracked();
}
uint64_t Engine::processes_evicted() const {
  return impl_->processes_evicted();
}
void Engine::ForEachPolicyStats(
    absl::FunctionRef<void(std::string_view, const PolicyStats&)> visit) const {
  impl_->ForEachPolicyStats(visit);
}
void Engine::ForEachPreference(
    absl::FunctionRef<void(const CurrentPreference&)> fn) const {
  impl_->ForEachPreference(fn);
}
int64_t Engine::now() const { return impl_->now(); }
void Engine::SetChangeListener(
    std::function<void(const PreferenceChange&)> listener) {
  impl_->set_listener(std::move(listener));
}
void Engine::SetScanListener(
    std::function<void(const ScanObservation&)> listener) {
  impl_->set_scan_listener(std::move(listener));
}
const Topology& Engine::topology() const { return impl_->context().topology(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
std::vector<std::string> Engine::policy_names() const {
  return impl_->policy_names();
}
bool Engine::enabled() const { return impl_->context().enabled(); }

}  // namespace schedcache
