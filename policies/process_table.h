// ProcessTable: what a session engine knows of each process apart from the
// policies' own state: the inputs that are not per policy (thread count,
// footprint, threads with their CPU and NUMA node), a dense slot per
// process that policies index their state by, and least-recently-active
// order for eviction beyond a bound.
//
// Every event names a process and a thread; looking both up in hash maps
// was a quarter of the engine's time. Consecutive events on one CPU are
// almost always the same thread, so the table remembers per CPU the last
// process slot and thread it resolved there, and checks that memory before
// trusting it (see OnCpu).
//
// Thread contract: thread-compatible (the session's single writer).
#ifndef SCHEDCACHE_POLICIES_PROCESS_TABLE_H_
#define SCHEDCACHE_POLICIES_PROCESS_TABLE_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "policies/model_context.h"
#include "policies/sample.h"

namespace schedcache {

struct ThreadState {
  int32_t numa_node = -1;  // preferred node, -1: none
  int32_t cpu = -1;        // the CPU it last ran or was switched in on
};

struct ProcessState {
  int32_t tgid = 0;
  int32_t nr_threads = kUnchangedNrThreads;  // -1: never given
  int32_t last_tid = 0;                      // thread of the latest event
  int64_t footprint_pages = 0;
  Comm comm;
  absl::flat_hash_map<int32_t, ThreadState> threads;
  // threads_version changes whenever `threads` may have moved its elements
  // (an insertion); 0 for a process with no threads.
  uint64_t threads_version = 0;
  uint32_t lru_prev = 0;  // towards the most recently active
  uint32_t lru_next = 0;
};

class ProcessTable {
 public:
  static constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

  // REQUIRES: max_processes >= 1; events name CPUs below num_cpu_slots.
  ProcessTable(int64_t max_processes, int num_cpu_slots)
      : max_processes_(max_processes), on_cpu_(num_cpu_slots) {}

  // Admission is where a process landed; `evicted` is true when the least
  // recently active process was dropped to make room, in which case `slot`
  // was its slot and the caller must forget that slot's old state.
  struct Admission {
    uint32_t slot;
    bool evicted;
  };
  // Admit finds or adds process `tgid`, named by an event on `cpu`, and
  // marks it most recently active.
  Admission Admit(int32_t tgid, int cpu);

  // Find returns the slot of `tgid`, or kNoSlot.
  uint32_t Find(int32_t tgid) const;

  ProcessState& process(uint32_t slot) { return processes_[slot]; }
  const ProcessState& process(uint32_t slot) const { return processes_[slot]; }

  // MoveThread makes thread `tid` of the process in `slot` run on `cpu`:
  // a thread is current on at most one CPU, so it leaves the rq it was
  // current on before. Returns the thread.
  ThreadState& MoveThread(uint32_t slot, int32_t tid, int cpu,
                          ModelContext& context);

  // RefOf describes the process in `slot` to policies.
  ProcessRef RefOf(uint32_t slot) const;

  uint64_t size() const { return slot_of_.size(); }
  uint64_t evicted() const { return evicted_; }

 private:
  // OnCpu is what the last event on a CPU resolved. It is a guess checked
  // on use: the slot must still hold `tgid`, and the thread pointer is
  // used only while its process's threads_version is unchanged.
  struct OnCpu {
    int32_t tgid = 0;
    uint32_t slot = kNoSlot;
    int32_t tid = 0;
    uint64_t threads_version = 0;
    ThreadState* thread = nullptr;
  };

  void LinkFront(uint32_t slot);
  void Unlink(uint32_t slot);
  // Touch marks `slot` most recently active.
  void Touch(uint32_t slot);

  const int64_t max_processes_;
  std::vector<OnCpu> on_cpu_;     // by CPU os index
  uint64_t last_threads_version_ = 0;
  absl::flat_hash_map<int32_t, uint32_t> slot_of_;
  std::vector<ProcessState> processes_;  // by slot
  uint32_t lru_head_ = kNoSlot;  // most recently active
  uint32_t lru_tail_ = kNoSlot;  // least recently active
  uint64_t evicted_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_PROCESS_TABLE_H_
