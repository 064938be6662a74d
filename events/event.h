// The model's inputs: runtime samples, CPU hand-overs, process starts and
// exits and the running kernel's own decisions, in the terms of docs/MODEL.md and
// docs/SERVICE.md (Ingest). Plain values with no heap storage,
// so the ingest path can move them without allocating. Every input (trace
// files, generated workloads, the client, the live collector) produces
// these and every consumer takes them, so they live here in events/, below
// the model.
#ifndef SCHEDCACHE_EVENTS_EVENT_H_
#define SCHEDCACHE_EVENTS_EVENT_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <variant>

namespace schedcache {

// kCommLength is the kernel's TASK_COMM_LEN: 15 characters and a NUL.
inline constexpr int kCommLength = 16;

// Comm is a process or thread name, truncated to kCommLength - 1 characters
// as the kernel does. Fixed storage: no allocation per sample.
class Comm {
 public:
  Comm() { chars_.fill('\0'); }
  explicit Comm(std::string_view name) : Comm() { Assign(name); }
  void Assign(std::string_view name) {
    chars_.fill('\0');
    const size_t n = name.size() < kCommLength - 1 ? name.size() : kCommLength - 1;
    for (size_t i = 0; i < n; ++i) chars_[i] = name[i];
  }
  std::string_view view() const { return std::string_view(chars_.data()); }
  bool empty() const { return chars_[0] == '\0'; }

 private:
  std::array<char, kCommLength> chars_;
};

// Values of the optional per-sample fields that mean "keep the last value".
inline constexpr int32_t kUnchangedNrThreads = -1;
inline constexpr int32_t kUnchangedNumaNode = -2;  // -1 means "no preferred node"
inline constexpr int64_t kUnchangedFootprint = -1;
// The value of Sample::jiffies that means "derive them from the timestamp".
inline constexpr int64_t kDerivedJiffies = -1;
// The value of Sample::cache_group that means "the process's own group".
inline constexpr uint64_t kOwnCacheGroup = 0;

// Sample is one runtime sample (kernel: account_mm_sched, and with `tick` the
// scheduler tick that follows it).
//  - tick: the thread ran delta_ns and is still running on `cpu`;
//  - no tick: a switch-out; the thread ran delta_ns up to timestamp_ns and
//    the CPU has no current thread until its next sample or hand-over.
struct Sample {
  int64_t timestamp_ns = 0;  // on the samples' clock, never the server's
  int32_t cpu = 0;           // CPU os index
  int32_t tgid = 0;          // process id (the kernel's mm), > 0
  int32_t tid = 0;           // thread id, > 0
  int64_t delta_ns = 0;      // runtime since the last sample; <= 0 accounts nothing
  bool tick = false;
  // A tick whose thread was switched out runnable (preempted) right after
  // it, before returning to user space: the scan work it queues runs at the
  // thread's next switch-in (docs/MODEL.md, Time in jiffies). false: at once.
  bool preempted = false;
  int32_t nr_threads = kUnchangedNrThreads;       // process's thread count
  int32_t numa_node = kUnchangedNumaNode;         // thread's preferred node
  int64_t footprint_pages = kUnchangedFootprint;  // process's footprint
  Comm comm;                                      // empty: unchanged
  // The running kernel's `jiffies` when this sample was taken (its tick's,
  // or the last value seen before a switch-out), the model's `now` in
  // jiffies for it (docs/MODEL.md, Time in jiffies); in [0, 2^62].
  // kDerivedJiffies: the jiffy of timestamp_ns through the clock anchor.
  int64_t jiffies = kDerivedJiffies;
  // The cache group the process belongs to from this sample on
  // (docs/MODEL.md, Cache groups). kOwnCacheGroup, the default, is the
  // process's own group, as the kernel's one group per address space; any
  // other value names a group that every process naming it shares. A
  // process that names another group than before changes membership.
  uint64_t cache_group = kOwnCacheGroup;
};

// HandOver says thread `tid` of `tgid` was switched in on `cpu` at
// `timestamp_ns` (kernel: sched_switch). tgid == 0 and tid == 0: the CPU went
// idle.
struct HandOver {
  int64_t timestamp_ns = 0;
  int32_t cpu = 0;
  int32_t tgid = 0;
  int32_t tid = 0;
};

// ProcessExit says process `tgid` exited at `timestamp_ns` (kernel:
// sched_process_exit of its group leader). The session forgets the process
// and its threads, and every preference it held ends with reason `exited`.
// An exit of a process the session does not know is accepted and changes
// nothing: a collector cannot know which processes a session tracks.
struct ProcessExit {
  int64_t timestamp_ns = 0;  // on the samples' clock
  int32_t tgid = 0;          // > 0
};

// ProcessStart says process `tgid` got a new address space at
// `timestamp_ns` (kernel: a fork without CLONE_VM, or an exec), and with it
// a new sched_cache_group (docs/MODEL.md, Time in jiffies: a group starts
// when its mm does). The session forgets what it knew of the process (an
// exec replaces the group: every preference it held ends with reason
// `exited`), and the process starts there, tracked, with the epoch the
// kernel gives a new group. A process that never gets one starts at its
// first sample as before.
struct ProcessStart {
  int64_t timestamp_ns = 0;  // on the samples' clock
  int32_t tgid = 0;          // > 0
};

// KernelDecision is one return of the running kernel's task_cache_work
// (kernel/sched/fair.c, CONFIG_SCHED_CACHE), as `schedcache record
// --kernel-decisions` observes it with fexit: the state of the calling
// task's sched_cache_group after the call, and the clocks the call saw. It
// is the kernel's own decision, the oracle the model is compared with
// (docs/MODEL.md); only the `kernel` policy takes its preference from it.
struct KernelDecision {
  int64_t timestamp_ns = 0;  // CLOCK_MONOTONIC at the return
  int32_t cpu = 0;           // the CPU the work ran on
  int32_t tgid = 0;          // > 0
  int32_t tid = 0;           // > 0
  // The group's preferred CPU after the call (sched_cache_grp->cpu); -1:
  // none.
  int32_t preferred_cpu = -1;
  bool scanned = false;         // the call moved grp->next_scan (it scanned)
  int64_t nr_running_avg = 0;   // grp->nr_running_avg after the call
  int64_t footprint = 0;        // grp->footprint (pages)
  // The group's identity within one capture (its address, hashed with a
  // per-capture key); 0: unknown. Threads of one group share it.
  uint64_t group = 0;
  int64_t jiffies = 0;          // jiffies at the return
  int64_t group_epoch = 0;      // grp->epoch after the call
  int64_t next_scan = 0;        // grp->next_scan after the call (jiffies)
  int64_t cpu_epoch = 0;        // this CPU's rq->cpu_epoch
  int64_t cpu_epoch_next = 0;   // this CPU's rq->cpu_epoch_next (jiffies)
};

// KernelTick is one scheduler tick of the running kernel on one CPU
// (sched_tick, recorded by `record --kernel-decisions`, docs/LIVE.md): the
// thread it found running there (tid and tgid 0: idle), jiffies then, and
// that thread's NUMA attributes as the kernel had them. Replay ticks the
// model where these fall (docs/MODEL.md, Time in jiffies), and the tick's
// Sample carries the attributes; a tick is no model input of its own.
struct KernelTick {
  int64_t timestamp_ns = 0;  // CLOCK_MONOTONIC at the tick
  int32_t cpu = 0;
  int32_t tgid = 0;
  int32_t tid = 0;
  int64_t jiffies = 0;
  // The thread's numa_preferred_nid (-1: none); kUnchangedNumaNode:
  // unknown (a capture without it, or a kernel without NUMA balancing).
  int32_t numa_node = kUnchangedNumaNode;
  // Its group's footprint (pages); kUnchangedFootprint: unknown.
  int64_t footprint_pages = kUnchangedFootprint;
};

// KernelClock is the running kernel's tick clock as a capture records it
// (`# schedcache_kernel_clock:`, docs/MODEL.md): jiffies became `jiffies`
// at `at_ns` on the capture's monotonic clock; the tick rate; the kernel's
// llc_epoch_period in jiffies; and one CPU's rq->cpu_epoch_next at that
// moment, which fixes the phase of every CPU's epochs (all start at the
// same boot jiffy).
struct KernelClock {
  int32_t hz = 0;
  int64_t jiffies = 0;
  int64_t at_ns = 0;
  int64_t epoch_period = 0;    // jiffies
  int64_t cpu_epoch_next = 0;  // jiffies
};

// Event is any input, for streams that interleave them.
using Event =
    std::variant<Sample, HandOver, ProcessExit, KernelDecision, ProcessStart>;

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_EVENT_H_
