#include "policies/process_table.h"

#include <algorithm>
#include <limits>

namespace schedcache {

uint32_t ProcessTable::Find(int32_t tgid) const {
  auto it = slot_of_.find(tgid);
  return it == slot_of_.end() || !processes_[it->second].started ? kNoSlot
                                                                 : it->second;
}

uint32_t ProcessTable::FindRecord(int32_t tgid) const {
  auto it = slot_of_.find(tgid);
  return it == slot_of_.end() ? kNoSlot : it->second;
}

const ThreadState* ProcessTable::FindThread(uint32_t slot, int32_t tid) const {
  const ProcessState& p = processes_[slot];
  auto it = p.threads.find(tid);
  return it == p.threads.end() ? nullptr : &threads_[it->second];
}

ProcessTable::Admission ProcessTable::AdmitSlow(int32_t tgid, int32_t tid,
                                                int64_t now) {
  Admission admission = AdmitProcess(tgid, now);
  if (admission.slot == kNoSlot) return admission;
  ProcessState& p = processes_[admission.slot];
  auto [it, inserted] = p.threads.try_emplace(tid, kUnknownThread);
  if (inserted) it->second = AddThread(admission.slot, tgid, tid);
  admission.thread = it->second;
  recent_[RecentIndex(tid)] = admission.thread;
  return admission;
}

ProcessTable::Admission ProcessTable::AdmitProcess(int32_t tgid,
                                                   int64_t now) {
  if (auto it = slot_of_.find(tgid); it != slot_of_.end()) {
    return {it->second, kUnknownThread};
  }
  // The bound counts processes: a named group's record is not one.
  if (static_cast<int64_t>(slot_of_.size()) >= max_processes_) {
    return {kNoSlot, kUnknownThread};
  }
  const uint32_t slot = NewSlot();
  ProcessState& p = processes_[slot];
  p.tgid = tgid;
  p.group = slot;  // its own group
  p.last_sample_ns = now;
  slot_of_.emplace(tgid, slot);
  // An admission counts as a sample until the first one: it moves the
  // process in as the most recent, as a touch in this period does.
  Stamp(slot, now);
  LinkFront(slot);
  return {slot, kUnknownThread};
}

uint32_t ProcessTable::NewSlot() {
  if (free_slots_.empty()) {
    processes_.emplace_back();
    lru_.emplace_back();
    return static_cast<uint32_t>(processes_.size() - 1);
  }
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  return slot;
}

uint32_t ProcessTable::FindGroup(uint64_t id) const {
  auto it = group_slot_of_.find(id);
  return it == group_slot_of_.end() ? kNoSlot : it->second;
}

uint32_t ProcessTable::AddGroup(uint64_t id, int64_t epoch) {
  const uint32_t slot = NewSlot();
  ProcessState& g = processes_[slot];
  g.group = slot;
  g.cache_group = id;
  g.nr_threads = 0;  // the sum over no member
  g.epoch = epoch;
  group_slot_of_.emplace(id, slot);
  named_groups_.emplace(slot, NamedGroup{});
  return slot;
}

void ProcessTable::Join(uint32_t slot, uint32_t group, ModelContext& context) {
  ProcessState& p = processes_[slot];
  p.group = group;
  p.cache_group = processes_[group].cache_group;
  if (group != slot) {
    named_groups_.at(group).members.push_back(slot);
    p.group_threads = 0;
    p.group_footprint = 0;
    SyncMember(slot);
  }
  for (const auto& [tid, handle] : p.threads) {
    const ThreadState& t = threads_[handle];
    if (t.current) context.mutable_rq(t.cpu).curr_group = group;
  }
}

bool ProcessTable::Leave(uint32_t slot) {
  ProcessState& p = processes_[slot];
  const uint32_t group = p.group;
  p.group = kNoSlot;
  p.cache_group = kOwnCacheGroup;
  if (group == slot) return true;
  NamedGroup& g = named_groups_.at(group);
  std::erase(g.members, slot);
  g.threads -= p.group_threads;
  g.footprint_pages -= p.group_footprint;
  p.group_threads = 0;
  p.group_footprint = 0;
  WriteSums(group, g);
  return g.members.empty();
}

void ProcessTable::RemoveGroup(uint32_t group) {
  group_slot_of_.erase(processes_[group].cache_group);
  named_groups_.erase(group);
  processes_[group] = ProcessState{};
  free_slots_.push_back(group);
}

void ProcessTable::SyncMember(uint32_t slot) {
  ProcessState& p = processes_[slot];
  NamedGroup& g = named_groups_.at(p.group);
  const int32_t threads = ThreadCount(p);
  g.threads += threads - p.group_threads;
  g.footprint_pages += p.footprint_pages - p.group_footprint;
  p.group_threads = threads;
  p.group_footprint = p.footprint_pages;
  WriteSums(p.group, g);
}

void ProcessTable::WriteSums(uint32_t slot, const NamedGroup& group) {
  ProcessState& g = processes_[slot];
  g.nr_threads = static_cast<int32_t>(std::min<int64_t>(
      group.threads, std::numeric_limits<int32_t>::max()));
  g.footprint_pages = static_cast<int64_t>(std::min<__int128>(
      group.footprint_pages, std::numeric_limits<int64_t>::max()));
}

void ProcessTable::SettleTail() {
  const uint64_t period = processes_[lru_tail_].lru_period;
  segment_.clear();
  for (uint32_t slot = lru_tail_;
       slot != kNoSlot && processes_[slot].lru_period == period;
       slot = lru_[slot].prev) {
    segment_.push_back(slot);
  }
  const uint32_t boundary = lru_[segment_.back()].prev;  // the rest
  // Most recent first, towards the tail: the list's own direction.
  std::sort(segment_.begin(), segment_.end(), [this](uint32_t a, uint32_t b) {
    return processes_[a].last_sample_seq > processes_[b].last_sample_seq;
  });
  for (size_t i = 0; i < segment_.size(); ++i) {
    lru_[segment_[i]] =
        LruLinks{i == 0 ? boundary : segment_[i - 1],
                 i + 1 == segment_.size() ? kNoSlot : segment_[i + 1]};
  }
  (boundary == kNoSlot ? lru_head_ : lru_[boundary].next) = segment_.front();
  lru_tail_ = segment_.back();
  settled_period_ = period;
  if (period == period_) ++period_;  // later touches move them out
}

void ProcessTable::Remove(uint32_t slot, ModelContext& context) {
  Unlink(slot);
  FreeThreads(slot, context);
  ProcessState& p = processes_[slot];
  if (p.started) --started_;
  slot_of_.erase(p.tgid);
  p = ProcessState{};
  free_slots_.push_back(slot);
}

uint32_t ProcessTable::AddThread(uint32_t slot, int32_t tgid, int32_t tid) {
  uint32_t handle;
  if (free_threads_.empty()) {
    handle = static_cast<uint32_t>(threads_.size());
    threads_.emplace_back();
  } else {
    handle = free_threads_.back();
    free_threads_.pop_back();
  }
  ThreadState& t = threads_[handle];
  t.tgid = tgid;
  t.tid = tid;
  t.slot = slot;
  return handle;
}

void ProcessTable::FreeThreads(uint32_t slot, ModelContext& context) {
  // A freed record has tgid 0, which no event names, so a stale entry of
  // recent_ pointing at it fails its check.
  for (const auto& [tid, handle] : processes_[slot].threads) {
    ThreadState& t = threads_[handle];
    if (t.current) SwitchOut(t.cpu, context);
    t = ThreadState{};
    free_threads_.push_back(handle);
  }
}

}  // namespace schedcache
