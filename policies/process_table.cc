#include "policies/process_table.h"

namespace schedcache {

uint32_t ProcessTable::Find(int32_t tgid) const {
  auto it = slot_of_.find(tgid);
  return it == slot_of_.end() ? kNoSlot : it->second;
}

void ProcessTable::Unlink(uint32_t slot) {
  ProcessState& p = processes_[slot];
  if (p.lru_prev != kNoSlot) {
    processes_[p.lru_prev].lru_next = p.lru_next;
  } else {
    lru_head_ = p.lru_next;
  }
  if (p.lru_next != kNoSlot) {
    processes_[p.lru_next].lru_prev = p.lru_prev;
  } else {
    lru_tail_ = p.lru_prev;
  }
}

void ProcessTable::LinkFront(uint32_t slot) {
  ProcessState& p = processes_[slot];
  p.lru_prev = kNoSlot;
  p.lru_next = lru_head_;
  if (lru_head_ != kNoSlot) processes_[lru_head_].lru_prev = slot;
  lru_head_ = slot;
  if (lru_tail_ == kNoSlot) lru_tail_ = slot;
}

void ProcessTable::Touch(uint32_t slot) {
  if (lru_head_ == slot) return;
  Unlink(slot);
  LinkFront(slot);
}

ProcessTable::Admission ProcessTable::Admit(int32_t tgid, int cpu) {
  OnCpu& last = on_cpu_[cpu];
  // The slot may have been reused since; it is ours only if it holds tgid.
  if (last.tgid == tgid && last.slot < processes_.size() &&
      processes_[last.slot].tgid == tgid) {
    Touch(last.slot);
    return {last.slot, false};
  }
  if (auto it = slot_of_.find(tgid); it != slot_of_.end()) {
    Touch(it->second);
    last.tgid = tgid;
    last.slot = it->second;
    return {it->second, false};
  }
  Admission admission{0, false};
  if (static_cast<int64_t>(slot_of_.size()) >= max_processes_) {
    // Reuse the least recently active process's slot.
    admission = {lru_tail_, true};
    Unlink(lru_tail_);
    slot_of_.erase(processes_[admission.slot].tgid);
    processes_[admission.slot] = ProcessState{};
    ++evicted_;
  } else {
    admission.slot = static_cast<uint32_t>(processes_.size());
    if (processes_.size() == processes_.capacity()) {
      // Growing moves every ProcessState, and with it (if the move is not
      // a steal) the threads the OnCpu entries point to.
      on_cpu_.assign(on_cpu_.size(), OnCpu{});
    }
    processes_.emplace_back();
  }
  processes_[admission.slot].tgid = tgid;
  last.tgid = tgid;
  last.slot = admission.slot;
  slot_of_.emplace(tgid, admission.slot);
  LinkFront(admission.slot);
  return admission;
}

ThreadState& ProcessTable::MoveThread(uint32_t slot, int32_t tid, int cpu,
                                      ModelContext& context) {
  ProcessState& p = processes_[slot];
  OnCpu& last = on_cpu_[cpu];
  if (last.slot != slot || last.tid != tid || last.tgid != p.tgid ||
      last.threads_version != p.threads_version) {
    auto [it, inserted] = p.threads.try_emplace(tid);
    if (inserted) p.threads_version = ++last_threads_version_;
    last = OnCpu{p.tgid, slot, tid, p.threads_version, &it->second};
  }
  ThreadState& thread = *last.thread;
  if (thread.cpu >= 0 && thread.cpu != cpu) {
    RqState& old = context.mutable_rq(thread.cpu);
    if (old.curr_tgid == p.tgid && old.curr_tid == tid) {
      old.curr_tgid = old.curr_tid = 0;
    }
  }
  thread.cpu = cpu;
  p.last_tid = tid;
  return thread;
}

ProcessRef ProcessTable::RefOf(uint32_t slot) const {
  const ProcessState& p = processes_[slot];
  return ProcessRef{slot, p.tgid,
                    p.nr_threads >= 0 ? p.nr_threads
                                      : static_cast<int32_t>(p.threads.size()),
                    p.footprint_pages};
}

}  // namespace schedcache
