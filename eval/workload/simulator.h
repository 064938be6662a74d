// Simulator: a small discrete-event model of a kernel scheduler running
// synthetic threads on a Topology, for the workload generator.
//
// Busy model: a CPU runs one thread at a time and keeps a FIFO run queue.
// A thread does bursts of work; at the end of each burst its Behavior
// decides whether it keeps running (Continue) or sleeps (Block), and may
// wake other threads. A thread that used up its time slice while others
// wait on its CPU is preempted to the tail of the queue.
//
// Placement imitates the kernel's wake-up path (select_task_rq_fair with
// CONFIG_SCHED_CACHE). The target LLC is the process's preferred LLC when it
// has one, except with probability spill_probability per wake-up (the
// spills a real kernel shows), when the thread is placed as if its process
// had no preference: the LLC of the waker's CPU (wake-affine), else the
// thread's previous LLC, else the LLC its process started on (chosen at
// random, as fork balancing would). The target CPU is the waker's CPU when
// it is in the target LLC (a sync wake-affine wake-up), else the previous
// CPU when it is, else the LLC's first CPU. Inside the target LLC, in the
// order of select_idle_sibling(): the target CPU if idle; the previous CPU
// if idle and in the target LLC; the first CPU of an idle core (every SMT
// sibling idle) scanning from the CPU after the target and wrapping
// (select_idle_core); an idle SMT sibling of the previous CPU
// (select_idle_smt); the first idle CPU in the same scan order
// (select_idle_cpu). The kernel's has_idle_cores hint and SIS_UTIL scan
// limit are not modelled: the search is exact and complete. With no idle
// CPU, a thread not bound to its preferred LLC takes an idle CPU of another
// LLC of the same node; otherwise the CPU with the shortest queue, in the
// same scan order (the kernel stacks on the target and leaves the rest to
// the periodic load balancer, which is not modelled). A CPU that goes idle
// pulls the first queued thread of the busiest CPU of its own LLC (newidle
// balance). Threads never move between LLCs otherwise.
//
// Every context switch goes through a SchedStateMachine, which emits the
// Samples, ticks and HandOvers: the same event shape as trace replay.
//
// Thread contract: thread-compatible; drives its sink from the calling
// thread.
#ifndef SCHEDCACHE_EVAL_WORKLOAD_SIMULATOR_H_
#define SCHEDCACHE_EVAL_WORKLOAD_SIMULATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/model_defaults.h"
#include "eval/workload/burst_queue.h"
#include "eval/workload/random.h"
#include "events/sched_state_machine.h"
#include "topology/topology.h"

namespace schedcache {

// PreferredLlcFn returns the LLC id a process (tgid) prefers, or -1 for
// none. The A/B driver wires it to the model, closing the loop.
using PreferredLlcFn = std::function<int(int32_t tgid)>;

class Simulator;

// Behavior is what a workload's threads do at the end of each burst: call
// exactly one of Simulator::Continue or Simulator::Block for `thread`, and
// optionally Simulator::Wake other threads.
class Behavior {
 public:
  virtual ~Behavior() = default;
  virtual absl::Status OnBurstEnd(Simulator& sim, int thread) = 0;
};

// SimulatorCounters counts placement decisions.
struct SimulatorCounters {
  int64_t wakeups = 0;      // placements of a woken thread
  int64_t spills = 0;       // wake-ups that ignored a preferred LLC
  int64_t preemptions = 0;  // slice expiries with others waiting
  int64_t steals = 0;       // newidle pulls within an LLC
};

class Simulator {
 public:
  struct Params {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t slice_ns = 3'000'000;
    double spill_probability = 0.02;
    int hz = kDefaultHz;
  };

  // All references must outlive the simulator; `preferred_llc` may be empty
  // (no preference for anyone).
  Simulator(const Topology& topology, const Params& params,
            PreferredLlcFn preferred_llc, DeterministicRandom& random,
            EventSink& sink);

  // AddThread registers a thread (asleep) and returns its index. Threads
  // sharing a tgid form a process; its first thread picks the process's
  // starting LLC.
  int AddThread(int32_t tgid, int32_t tid, std::string comm);

  // Run simulates until the end time, calling `behavior` at burst ends,
  // then emits the ticks up to the end.
  absl::Status Run(Behavior& behavior);

  // Wake makes a sleeping thread runnable with a burst of `burst_ns`; it is
  // placed as described above. `waker` is the waking thread, or -1. A
  // thread that is not asleep is left alone (returns OK).
  absl::Status Wake(int thread, int waker, int64_t burst_ns);
  // Continue gives the running `thread` another burst (it may be preempted).
  absl::Status Continue(int thread, int64_t burst_ns);
  // Block puts the running `thread` to sleep.
  absl::Status Block(int thread);

  bool asleep(int thread) const {
    return threads_[thread].state == State::kAsleep;
  }
  int64_t now_ns() const { return now_ns_; }
  const SimulatorCounters& counters() const { return counters_; }
  const SchedStateMachine& machine() const { return machine_; }

 private:
  enum class State { kAsleep, kQueued, kRunning };
  struct Thread {
    int32_t tgid;
    int32_t tid;
    std::string comm;
    State state = State::kAsleep;
    int cpu = -1;             // running or queued on; else last ran on
    int64_t burst_left_ns = 0;
    int64_t on_cpu_since_ns = 0;
    // seq of the thread's pending burst end; a queued one with another seq
    // is stale. kNoBurst: none pending.
    uint64_t burst_seq = kNoBurst;
  };
  static constexpr uint64_t kNoBurst = UINT64_MAX;
  struct Cpu {
    int current = -1;         // thread index, -1: idle
    std::deque<int> queue;
  };

  // Target is the LLC a wake-up aims at, and whether it is the process's
  // preferred LLC (then the thread waits there rather than leave it).
  struct Target {
    int llc;
    bool preferred;
  };
  int SelectCpu(const Thread& t, int waker_cpu);
  Target TargetLlc(const Thread& t, int waker_cpu);
  // TargetCpu is where the idle search of `llc` starts (see above).
  int TargetCpu(int llc, const Thread& t, int waker_cpu) const;
  // IdleCoreIn returns the first CPU, in WrapFrom order, whose SMT siblings
  // are all idle, or -1.
  int IdleCoreIn(const std::vector<int>& cpus, int target) const;
  // IdleSiblingOf returns an idle SMT sibling of `cpu` (not `cpu`), or -1.
  int IdleSiblingOf(int cpu) const;
  // IdleCpuIn returns the first idle CPU of `cpus` in WrapFrom order, or -1.
  int IdleCpuIn(const std::vector<int>& cpus, int target) const;
  // ShortestQueueIn returns the CPU of `cpus` with the fewest queued
  // threads, the first in WrapFrom order on a tie.
  int ShortestQueueIn(const std::vector<int>& cpus, int target) const;
  // WrapFrom is the position in `cpus` after `target` (the kernel's
  // for_each_cpu_wrap(cpu, span, target + 1)), or 0 when `target` is not
  // in `cpus`.
  size_t WrapFrom(const std::vector<int>& cpus, int target) const;
  bool Idle(int cpu) const {
    return cpus_[cpu].current < 0 && cpus_[cpu].queue.empty();
  }
  // SwitchTo makes `next` (-1: idle) current on `cpu` and starts its burst.
  absl::Status SwitchTo(int cpu, int next);
  // PickNext chooses what `cpu` runs after its current thread leaves: its
  // queue head, else a thread pulled from its LLC, else -1.
  int PickNext(int cpu);
  void StartBurst(int thread);

  const Topology& topology_;
  const Params params_;
  PreferredLlcFn preferred_llc_;
  DeterministicRandom& random_;
  SchedStateMachine machine_;
  std::vector<std::vector<int>> llc_cpus_;  // LLC id -> CPU os indexes
  std::vector<std::vector<int>> core_cpus_; // dense core -> CPU os indexes
  std::vector<Thread> threads_;
  std::vector<Cpu> cpus_;                   // by os index
  std::vector<int> queued_in_llc_;          // LLC id -> threads queued
  // CPU os index -> its position in its LLC's llc_cpus_ entry, so WrapFrom
  // needs no search.
  std::vector<size_t> position_in_llc_;
  std::vector<std::pair<int32_t, int>> start_llc_;  // tgid -> LLC
  BurstQueue events_;
  // top_handled_: Run is handling the queue's top, which is logically
  // gone; the first burst started meanwhile takes its slot (ReplaceTop).
  bool top_handled_ = false;
  uint64_t next_seq_ = 0;
  int64_t now_ns_ = 0;
  SimulatorCounters counters_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_WORKLOAD_SIMULATOR_H_
