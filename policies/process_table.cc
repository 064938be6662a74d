#include "policies/process_table.h"

#include <algorithm>

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
  if (static_cast<int64_t>(slot_of_.size()) >= max_processes_) {
    return {kNoSlot, kUnknownThread};
  }
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(processes_.size());
    processes_.emplace_back();
    lru_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  processes_[slot].tgid = tgid;
  processes_[slot].last_sample_ns = now;
  slot_of_.emplace(tgid, slot);
  // An admission counts as a sample until the first one: it moves the
  // process in as the most recent, as a touch in this period does.
  Stamp(slot, now);
  LinkFront(slot);
  return {slot, kUnknownThread};
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
