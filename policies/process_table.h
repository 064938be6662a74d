// ProcessTable: what a session engine knows of each process apart from the
// policies' own state: the inputs that are not per policy (thread count,
// footprint, threads with their CPU and NUMA node), a dense slot per
// process that policies index their state by, and the order of their last
// runtime samples, so the engine knows whom to evict beyond a bound and
// finds the processes idle too long by looking at the oldest only.
//
// It also keeps the cache groups (docs/MODEL.md, Cache groups): a process
// is its own group, whose state policies keep in the process's own slot,
// until a sample names a group; a named group has a record and a slot of
// its own (tgid 0, not a process: never tracked, never evicted, not in the
// recency list), which holds the group's epoch and its members' summed
// thread count and footprint, so that RefOf describes either kind alike.
//
// Every event names a process and a thread, and resolving them is most of
// the engine's own cost. Threads live in one slab with stable indices
// (handles), each record naming its process and slot, so one thread
// lookup resolves both. A small direct-mapped table by tid remembers the
// handle last resolved for that tid; the record is checked (tgid and tid)
// before the guess is trusted, so a collision or a freed record only costs
// the hash-map path.
//
// Thread contract: thread-compatible (the session's single writer).
#ifndef SCHEDCACHE_POLICIES_PROCESS_TABLE_H_
#define SCHEDCACHE_POLICIES_PROCESS_TABLE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "events/event.h"
#include "policies/model_context.h"

namespace schedcache {

struct ThreadState {
  int32_t tgid = 0;        // 0: a free record
  int32_t tid = 0;
  uint32_t slot = 0;       // the process's slot
  int32_t numa_node = -1;  // preferred node, -1: none
  int32_t cpu = -1;        // the CPU it last ran or was switched in on
  bool sampled = false;    // a runtime sample named it (not only hand-overs)
  bool current = false;    // it is rq.curr of `cpu`
  // Its task_cache_work is queued and waits for its next switch-in
  // (docs/MODEL.md, Time in jiffies); its ticks queue nothing meanwhile.
  bool work_pending = false;
};

// ProcessState is one process, or one named cache group's record (tgid 0).
// A process known only from hand-overs has a record (its threads' CPUs keep
// rq.curr exact) but has not started: it is not tracked, policies hear
// nothing of it, and Recommend does not find it. It starts at its
// ProcessStart (the kernel's new group), or without one at its first
// runtime sample, whatever the delta (docs/MODEL.md).
struct ProcessState {
  int32_t tgid = 0;
  bool started = false;
  // The slot of its cache group: its own slot while it is its own group
  // (and a named group's record's own); ~0 while it leaves one for
  // another. cache_group is the group's id, Sample::cache_group
  // (kOwnCacheGroup: its own).
  uint32_t group = ~uint32_t{0};
  int32_t nr_threads = kUnchangedNrThreads;  // -1: never given
  int32_t sampled_threads = 0;               // distinct threads sampled
  int32_t last_tid = 0;                      // thread of the latest event
  // Session clock at its last runtime sample; its admission until then.
  int64_t last_sample_ns = 0;
  int64_t footprint_pages = 0;
  // epoch is the kernel's group epoch (see ProcessRef::epoch), kept in the
  // group's record: the process's own while it is its own group.
  int64_t epoch = 0;
  uint64_t cache_group = kOwnCacheGroup;
  // Recency: the table's count of samples (and admissions) at its latest,
  // and the touch period in which it was last moved in the LRU list.
  uint64_t last_sample_seq = 0;
  uint64_t lru_period = 0;
  Comm comm;
  absl::flat_hash_map<int32_t, uint32_t> threads;  // tid -> thread handle
  // A member of a named group: the thread count and footprint it adds to
  // the group's sums (ProcessTable::SyncMember).
  int32_t group_threads = 0;
  int64_t group_footprint = 0;
};

class ProcessTable {
 public:
  static constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

  // REQUIRES: num_cpus >= 1 (events name CPUs below it), max_processes
  // >= 1, touch_period_ns >= 1. A process moves in the LRU list at most
  // once per touch_period_ns of the clock (the engine: one epoch);
  // least_recently_sampled puts the list's tail in exact order before it
  // answers, so evictions follow the exact order.
  ProcessTable(int num_cpus, int64_t max_processes,
               int64_t touch_period_ns = 1)
      : max_processes_(max_processes),
        touch_period_ns_(touch_period_ns),
        recent_(kRecentSize, kUnknownThread),
        threads_(1),
        current_(num_cpus, kUnknownThread) {}

  // Admission is where an event's process and thread landed. `slot` is
  // kNoSlot when the process is new and the table is full: the caller
  // makes room (Remove) and admits again.
  struct Admission {
    uint32_t slot;
    uint32_t thread;  // handle, for thread()
  };
  // Admit finds or adds process `tgid` and its thread `tid` (both > 0). A
  // new process counts as sampled at `now`, the session clock, until its
  // first sample; only samples (NoteSample) move a process later.
  Admission Admit(int32_t tgid, int32_t tid, int64_t now) {
    const uint32_t guess = recent_[RecentIndex(tid)];
    const ThreadState& t = threads_[guess];
    if (t.tid == tid && t.tgid == tgid) return {t.slot, guess};
    return AdmitSlow(tgid, tid, now);
  }
  // Remove forgets the process in `slot` and its threads; a thread of it
  // that is current on a CPU (rq.curr) stops being current there. The slot
  // is reused by a later admission. REQUIRES: the process is no member of
  // a named group (Leave).
  void Remove(uint32_t slot, ModelContext& context);
  // least_recently_sampled is the slot of the process whose last sample is
  // the oldest: the one to evict to make room. REQUIRES: !empty().
  uint32_t least_recently_sampled() {
    if (processes_[lru_tail_].lru_period != settled_period_) SettleTail();
    return lru_tail_;
  }
  // empty is true when the table holds no process, started or not.
  bool empty() const { return lru_tail_ == kNoSlot; }

  // Find returns the slot of `tgid` if it has started, or kNoSlot.
  uint32_t Find(int32_t tgid) const;
  // FindRecord returns the slot of `tgid`, started or known only from
  // hand-overs, or kNoSlot.
  uint32_t FindRecord(int32_t tgid) const;
  // FindThread returns thread `tid` of the process in `slot`, or nullptr.
  const ThreadState* FindThread(uint32_t slot, int32_t tid) const;

  ProcessState& process(uint32_t slot) { return processes_[slot]; }
  const ProcessState& process(uint32_t slot) const { return processes_[slot]; }
  ThreadState& thread(uint32_t handle) { return threads_[handle]; }

  // SwitchIn makes thread `handle` of the process in `slot` current on
  // `cpu` (rq.curr): a thread is current on at most one CPU, so it stops
  // being current on the CPU it ran on before. Returns the thread.
  //
  // Each thread says whether it is current and each CPU which thread is,
  // so a hand-over reads the thread and the CPU side by side: it never
  // follows the thread to the rq of its previous CPU (a dependent load
  // per event) to learn whether it still runs there, which it rarely does.
  ThreadState& SwitchIn(uint32_t slot, uint32_t handle, int cpu,
                        ModelContext& context) {
    ThreadState& t = threads_[handle];
    // The thread current here until now stops being so; its rq fields
    // are overwritten below. With no thread current, this writes the
    // record that stays free, which nothing reads.
    threads_[current_[cpu]].current = false;
    if (t.current) SwitchOut(t.cpu, context);  // current on another CPU
    t.current = true;
    t.cpu = cpu;
    current_[cpu] = handle;
    RqState& rq = context.mutable_rq(cpu);
    ProcessState& p = processes_[slot];
    rq.curr_tid = t.tid;
    rq.curr_group = p.group;
    p.last_tid = t.tid;
    return t;
  }
  // SwitchOut leaves `cpu` with no current thread (rq.curr empty).
  void SwitchOut(int cpu, ModelContext& context) {
    threads_[current_[cpu]].current = false;
    current_[cpu] = kUnknownThread;
    RqState& rq = context.mutable_rq(cpu);
    rq.curr_tid = 0;
    rq.curr_group = RqState::kNoGroup;
  }

  // NoteSample records that a runtime sample named thread `handle` of the
  // process in `slot` at `now`, the session clock (never earlier than any
  // before): the process starts (at `epoch`, its CPU's epoch) if it has
  // not, the thread counts as seen, and the process becomes the most
  // recently sampled. Inline: every sample calls it.
  void NoteSample(uint32_t slot, uint32_t handle, int64_t epoch,
                  int64_t now) {
    Touch(slot, now);
    ProcessState& p = processes_[slot];
    p.last_sample_ns = now;
    if (!p.started) Start(slot, epoch);
    ThreadState& t = threads_[handle];
    if (!t.sampled) {
      t.sampled = true;
      ++p.sampled_threads;
    }
  }

  // Start starts the process in `slot`, which has not started, with group
  // epoch `epoch`: it is tracked from now on.
  void Start(uint32_t slot, int64_t epoch) {
    ProcessState& p = processes_[slot];
    p.started = true;
    p.epoch = epoch;
    ++started_;
  }

  // RefOf describes the cache group in `slot` to policies: a process in
  // its own group, or a named group's record.
  ProcessRef RefOf(uint32_t slot) const {
    const ProcessState& p = processes_[slot];
    return ProcessRef{slot, p.tgid, ThreadCount(p), p.footprint_pages,
                      p.epoch};
  }

  // Cache groups (docs/MODEL.md, Cache groups). A process leaves its group
  // (Leave) and joins another (Join) at a sample that names another group;
  // it leaves at its exit, eviction or exec (then Remove).
  //
  // FindGroup returns the slot of named group `id`, or kNoSlot.
  uint32_t FindGroup(uint64_t id) const;
  // AddGroup creates named group `id` (!= kOwnCacheGroup; not a group
  // yet) with group epoch `epoch` and no member; returns its slot, which
  // the caller prepares as a new process's.
  uint32_t AddGroup(uint64_t id, int64_t epoch);
  // Join makes the process in `slot`, in no group, a member of the group
  // in `group`: `slot` itself (its own group; the caller sets its epoch)
  // or a named group's. Its threads current on a CPU count there for the
  // group from now on (rq.curr_group).
  void Join(uint32_t slot, uint32_t group, ModelContext& context);
  // Leave takes the process in `slot` out of its group and returns true
  // when the group has no member left: its own group always, a named one
  // after its last member. The caller then ends it (and a named group's
  // record with RemoveGroup).
  bool Leave(uint32_t slot);
  // RemoveGroup forgets the named group in `group`, which has no member;
  // its slot is reused by a later admission.
  void RemoveGroup(uint32_t group);
  // SyncMember brings the sums of the named group of the process in
  // `slot` up to its thread count and footprint, after a sample may have
  // changed them. REQUIRES: the process is a member of a named group.
  void SyncMember(uint32_t slot);
  // ForEachMember calls `fn` with the slot of every member of the group
  // in `group`, in the order they joined: for a process's own group, the
  // process.
  template <typename Fn>
  void ForEachMember(uint32_t group, Fn&& fn) const {
    if (processes_[group].cache_group == kOwnCacheGroup) {
      fn(group);
      return;
    }
    for (const uint32_t member : named_groups_.at(group).members) fn(member);
  }

  // size counts the started processes (the tracked ones).
  uint64_t size() const { return started_; }

 private:
  // kRecentSize entries of the tid table: tids are small integers (below
  // the kernel's pid_max), so the low bits spread them.
  static constexpr uint32_t kRecentSize = 4096;
  static uint32_t RecentIndex(int32_t tid) {
    return static_cast<uint32_t>(tid) & (kRecentSize - 1);
  }
  // kUnknownThread is the handle of a record that stays free (tgid 0, which
  // no event names): a tid table entry that guessed nothing yet points
  // there, so a guess needs no bounds check.
  static constexpr uint32_t kUnknownThread = 0;

  // LruLinks are a slot's neighbours in least-recently-active order, kept
  // apart from ProcessState so a touch writes one small array.
  struct LruLinks {
    uint32_t prev = kNoSlot;  // towards the most recently sampled
    uint32_t next = kNoSlot;
  };

  // NamedGroup is what a named group's record does not hold: its members
  // and the exact sums its record holds saturated.
  struct NamedGroup {
    std::vector<uint32_t> members;  // slots, in the order they joined
    int64_t threads = 0;
    __int128 footprint_pages = 0;
  };

  // ThreadCount is the thread count a process's or group's record gives
  // policies: the last value given, else the distinct threads sampled (a
  // named group's record always holds its sum).
  static int32_t ThreadCount(const ProcessState& p) {
    return p.nr_threads >= 0 ? p.nr_threads : p.sampled_threads;
  }
  // NewSlot is a free slot for a record, reused or new.
  uint32_t NewSlot();
  // WriteSums stores `group`'s sums into its record, saturated at the
  // largest values ProcessRef carries.
  void WriteSums(uint32_t slot, const NamedGroup& group);

  Admission AdmitSlow(int32_t tgid, int32_t tid, int64_t now);
  // AdmitProcess finds or adds process `tgid`; a new one is the most
  // recently sampled, at `now`.
  Admission AdmitProcess(int32_t tgid, int64_t now);
  // AddThread gives thread `tid` of the process in `slot` a record.
  uint32_t AddThread(uint32_t slot, int32_t tgid, int32_t tid);
  // FreeThreads releases the thread records of the process in `slot`,
  // clearing rq.curr where one of them is current.
  void FreeThreads(uint32_t slot, ModelContext& context);
  void LinkFront(uint32_t slot) {
    lru_[slot] = LruLinks{kNoSlot, lru_head_};
    if (lru_head_ != kNoSlot) lru_[lru_head_].prev = slot;
    lru_head_ = slot;
    if (lru_tail_ == kNoSlot) lru_tail_ = slot;
  }
  void Unlink(uint32_t slot) {
    const LruLinks links = lru_[slot];
    if (links.prev != kNoSlot) {
      lru_[links.prev].next = links.next;
    } else {
      lru_head_ = links.next;
    }
    if (links.next != kNoSlot) {
      lru_[links.next].prev = links.prev;
    } else {
      lru_tail_ = links.prev;
    }
  }
  // Touch marks `slot` most recently sampled at `now`. The list is kept
  // in order of the period of each process's last move, so a process moves
  // at most once per period (relinking it at every sample cost 15-20% of
  // the engine in stalls, docs/PERFORMANCE.md); within the tail's period
  // the order is repaired by SettleTail when it is asked for.
  void Touch(uint32_t slot, int64_t now) {
    if (Stamp(slot, now) && lru_head_ != slot) {
      Unlink(slot);
      LinkFront(slot);
    }
  }
  // Stamp records a sample of `slot` at `now` and returns whether the
  // process must move to the front: its last move was in an earlier period.
  bool Stamp(uint32_t slot, int64_t now) {
    if (now > period_ends_ns_) {
      ++period_;
      period_ends_ns_ = now + touch_period_ns_;
    }
    ProcessState& p = processes_[slot];
    p.last_sample_seq = ++sample_seq_;
    if (p.lru_period == period_) return false;
    p.lru_period = period_;
    return true;
  }
  // SettleTail sorts the list's tail segment (the processes of the tail's
  // period) by their last sample. A settled segment stays sorted: a
  // process leaves it when it moves, and none joins it, since a segment of
  // the current period starts a new period when it is settled.
  void SettleTail();

  const int64_t max_processes_;
  const int64_t touch_period_ns_;
  uint64_t period_ = 1;  // the current touch period
  int64_t period_ends_ns_ = std::numeric_limits<int64_t>::min();
  uint64_t settled_period_ = 0;  // the tail segment sorted, if any
  uint64_t sample_seq_ = 0;
  std::vector<uint32_t> segment_;  // scratch for SettleTail
  std::vector<uint32_t> recent_;  // by RecentIndex(tid): a thread handle
  std::vector<ThreadState> threads_;   // by handle; [kUnknownThread] free
  std::vector<uint32_t> free_threads_;  // handles of free records
  // By CPU: the handle of the thread current there (its rq.curr), or
  // kUnknownThread for none.
  std::vector<uint32_t> current_;
  absl::flat_hash_map<int32_t, uint32_t> slot_of_;
  absl::flat_hash_map<uint64_t, uint32_t> group_slot_of_;  // named group id
  absl::flat_hash_map<uint32_t, NamedGroup> named_groups_;  // by slot
  std::vector<ProcessState> processes_;  // by slot
  std::vector<LruLinks> lru_;            // by slot
  std::vector<uint32_t> free_slots_;     // slots of removed processes
  uint32_t lru_head_ = kNoSlot;  // most recently sampled
  uint32_t lru_tail_ = kNoSlot;  // least recently sampled
  uint64_t started_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_PROCESS_TABLE_H_
