// The engine's cache groups (docs/MODEL.md, Cache groups): a process
// leaving its group and joining another, a group ending with its last
// member, a group's preference reported once per member, and the named
// groups' runtime on each policy's preferred LLC.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "events/event.h"
#include "policies/decision.h"
#include "policies/model_context.h"
#include "policies/engine.h"
#include "policies/engine_impl.h"

namespace schedcache {

void Engine::Impl::Notify(const PolicySlot& policy, uint32_t slot,
                          int old_llc, const Preference& preference,
                          int64_t now) {
  if (!listener_) return;
  const ProcessState& p = processes_.process(slot);
  listener_(PreferenceChange{p.tgid, policy.name, old_llc, preference.llc,
                             preference.cpu, preference.reason, now,
                             p.cache_group});
}

void Engine::Impl::ChangePreference(PolicySlot& policy, uint32_t group,
                                    const Preference& preference,
                                    int64_t now) {
  const int old = policy.pref_llc[group];
  policy.pref_llc[group] = preference.llc;
  if (group == group_sample_.group &&
      group_sample_.sample == samples_applied_) [[unlikely]] {
    SettleGroupRuntime(policy, old, preference.llc);
  }
  if (!listener_) return;
  processes_.ForEachMember(group, [&](uint32_t member) {
    Notify(policy, member, old, preference, now);
  });
}

void Engine::Impl::LeaveGroup(uint32_t slot) {
  const uint32_t group = processes_.process(slot).group;
  if (!processes_.Leave(slot)) return;
  // The group ends (kernel: its last reference is dropped and it is
  // freed); whoever held its preference was told already.
  for (PolicySlot& policy : policies_) {
    policy.pref_llc[group] = -1;
    policy.policy->Forget(group);
  }
  if (group != slot) {
    EndGroupRuntime(group);
    processes_.RemoveGroup(group);
  }
}

uint32_t Engine::Impl::ApplyGroupOfSample(uint32_t slot, uint64_t id,
                                          int32_t cpu, int64_t now) {
  if (id != processes_.process(slot).cache_group) {
    ChangeGroup(slot, id, cpu, now);  // joining sums the new attributes
  } else {
    processes_.SyncMember(slot);
  }
  return processes_.process(slot).group;
}

void Engine::Impl::ChangeGroup(uint32_t slot, uint64_t id, int32_t cpu,
                               int64_t now) {
  // What the process reported under each policy before: its old group's.
  old_llcs_.clear();
  const uint32_t old_group = processes_.process(slot).group;
  for (const PolicySlot& policy : policies_) {
    old_llcs_.push_back(policy.pref_llc[old_group]);
  }
  // The prctl RFC's SHARE_FROM: the old group keeps its state for its
  // other members (or ends), and the process takes none of it along.
  LeaveGroup(slot);
  // A group the input has not shown before starts here, at the epoch of
  // the sample's CPU, as a process without a ProcessStart does at its
  // first sample (docs/MODEL.md, Cache groups); decay composes, so
  // advancing the CPU here changes nothing else.
  context_.Advance(cpu, jiffies_);
  const int64_t epoch = context_.rq(cpu).cpu_epoch;
  uint32_t group = slot;
  if (id == kOwnCacheGroup) {
    processes_.process(slot).epoch = epoch;  // a fresh group of its own
  } else {
    group = processes_.FindGroup(id);
    if (group == ProcessTable::kNoSlot) {
      group = processes_.AddGroup(id, epoch);
      if (group >= slots_prepared_) PrepareSlot(group);
      StartGroupRuntime(group, id);
    }
  }
  processes_.Join(slot, group, context_);
  for (size_t i = 0; i < policies_.size(); ++i) {
    const PolicySlot& policy = policies_[i];
    if (policy.pref_llc[group] != old_llcs_[i]) {
      Notify(policy, slot, old_llcs_[i],
             policy.policy->CurrentPreference(group), now);
    }
  }
}

uint32_t Engine::Impl::ApplyGroupedSample(const Sample& s, uint32_t slot,
                                          ThreadState& t, bool switched_in,
                                          int64_t now) {
  const uint32_t group = ApplyGroupOfSample(slot, s.cache_group, s.cpu, now);
  // As ApplySample would next (the work changes nothing the group holds),
  // so that the preferences counted below are those Account starts from.
  if (t.work_pending && switched_in) RunPendingWork(slot, t, s.cpu, now);
  group_sample_.group = ProcessTable::kNoSlot;
  // A named group's slot is never its member's (a sample naming 0 after a
  // named group gave the process its own group again).
  if (group != slot && s.delta_ns > 0) {
    const int llc = context_.llc_of(s.cpu);
    const auto delta = static_cast<uint64_t>(s.delta_ns);
    CountGroupRuntime(group, llc, delta);
    group_sample_ = GroupSample{group, samples_applied_, llc, delta};
  }
  return group;
}

void Engine::Impl::CountGroupRuntime(uint32_t group, int llc,
                                     uint64_t delta) {
  GroupRuntime& runtime = *group_runtime_of_[group];
  runtime.runtime_ns = AddRuntime(runtime.runtime_ns, delta);
  for (size_t i = 0; i < policies_.size(); ++i) {
    if (policies_[i].pref_llc[group] == llc) {
      runtime.on_preferred_llc_ns[i] =
          AddRuntime(runtime.on_preferred_llc_ns[i], delta);
    }
  }
}

void Engine::Impl::SettleGroupRuntime(const PolicySlot& policy, int old_llc,
                                      int new_llc) {
  uint64_t& on_preferred = group_runtime_of_[group_sample_.group]
                               ->on_preferred_llc_ns[&policy - policies_.data()];
  const uint64_t delta = group_sample_.delta;
  // Exact below saturation: the sample was added to the sum just before.
  if (old_llc == group_sample_.llc) on_preferred -= std::min(on_preferred, delta);
  if (new_llc == group_sample_.llc) {
    on_preferred = AddRuntime(on_preferred, delta);
  }
}

void Engine::Impl::StartGroupRuntime(uint32_t group, uint64_t id) {
  std::unique_ptr<GroupRuntime>& runtime = group_runtimes_[id];
  if (runtime == nullptr) {
    runtime = std::make_unique<GroupRuntime>();
    runtime->on_preferred_llc_ns.assign(policies_.size(), 0);
  } else {
    --ended_group_runtimes_;  // the id's previous life ended
  }
  group_runtime_of_[group] = runtime.get();
}

void Engine::Impl::EndGroupRuntime(uint32_t group) {
  group_runtime_of_[group] = nullptr;
  if (ended_group_runtimes_ < kMaxEndedCacheGroups) {
    ++ended_group_runtimes_;
    return;
  }
  // Left out: a later group of this id counts from its start.
  group_runtimes_.erase(processes_.process(group).cache_group);
  ++group_runtimes_left_out_;
}

std::vector<CacheGroupRuntime> Engine::Impl::GroupRuntimes() const {
  const auto capped = [](uint64_t ns) {
    return static_cast<int64_t>(std::min<uint64_t>(
        ns, std::numeric_limits<int64_t>::max()));
  };
  std::vector<CacheGroupRuntime> groups;
  groups.reserve(group_runtimes_.size());
  for (const auto& [id, runtime] : group_runtimes_) {
    CacheGroupRuntime& out = groups.emplace_back();
    out.id = id;
    out.runtime_ns = capped(runtime->runtime_ns);
    for (const uint64_t ns : runtime->on_preferred_llc_ns) {
      out.runtime_on_preferred_llc_ns.push_back(capped(ns));
    }
  }
  std::sort(groups.begin(), groups.end(),
            [](const CacheGroupRuntime& a, const CacheGroupRuntime& b) {
              return a.id < b.id;
            });
  return groups;
}

}  // namespace schedcache
