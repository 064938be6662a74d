// The engine's cache groups (docs/MODEL.md, Cache groups): a process
// leaving its group and joining another, a group ending with its last
// member, and a group's preference reported once per member.
#include <cstdint>

#include "events/event.h"
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
  if (group != slot) processes_.RemoveGroup(group);
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

}  // namespace schedcache
