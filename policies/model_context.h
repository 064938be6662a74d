// ModelContext: the state one session shares between all of its policies:
// the topology tables the kernel model reads (LLC spans, sizes, SMT
// siblings, NUMA nodes, all restricted to online CPUs as the kernel's
// sched domains are), the model tunables, and the per-CPU runqueue state
// ("rq" in docs/MODEL.md, The model). The engine owns one; every policy of the
// session reads it.
//
// Decay composes exactly (advancing an rq to t1 then to t2 equals advancing
// it to t2 directly), so any policy may advance an rq and it does not matter
// which one did. Policies must not change an rq in any other way.
//
// Thread contract: thread-compatible; the session's single writer drives it.
#ifndef SCHEDCACHE_POLICIES_MODEL_CONTEXT_H_
#define SCHEDCACHE_POLICIES_MODEL_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "events/jiffy_clock.h"
#include "policies/decision.h"
#include "policies/tunables.h"
#include "topology/cpu_set.h"
#include "topology/topology.h"

namespace schedcache {

// kNice0Load is the fixed-point full scale of an occupancy on 64-bit
// kernels (NICE_0_LOAD = 1024 << SCHED_FIXEDPOINT_SHIFT).
inline constexpr uint64_t kNice0Load = uint64_t{1} << 20;
// kPageBytes is the page size footprints are counted in.
inline constexpr int64_t kPageBytes = 4096;

// RqState is one CPU's share of the model (kernel: the cache fields of
// struct rq, and rq->curr).
struct RqState {
  // curr_group's value when no thread is current.
  static constexpr uint32_t kNoGroup = ~uint32_t{0};

  int64_t cpu_epoch = 0;
  // jiffies; ModelContext::Start puts every CPU's on one grid
  int64_t cpu_epoch_next = 0;
  uint64_t cpu_runtime = 0;    // decayed ns
  int32_t curr_tid = 0;        // 0: no current thread
  // The cache group of the thread current here (its ProcessRef::slot), so
  // a scan counts the running threads of every member of its group
  // (docs/MODEL.md, Cache groups); kNoGroup: no current thread.
  uint32_t curr_group = kNoGroup;
};

// AddRuntime is a + b, saturating at the largest value instead of
// wrapping: the kernel's u64 runtimes cannot overflow because decay bounds
// them, but a session's input may carry deltas near 2^63 at one instant.
inline uint64_t AddRuntime(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? ~uint64_t{0} : sum;
}

// ShiftDecay halves `value` n times (kernel __shr_u64: 0 when n >= 64).
inline uint64_t ShiftDecay(uint64_t value, int64_t n) {
  return n >= 64 ? 0 : value >> n;
}

// AdvanceRq is the per-CPU half of decay() (model_context.cc names the
// kernel function it mirrors), in jiffies: a jiffy at exactly
// cpu_epoch_next stays in the earlier epoch; epochs advance by the ceiling
// of the elapsed periods. REQUIRES: period >= 1, jiffies of timestamps in
// [0, ModelContext::kMaxTimestampNs].
void AdvanceRq(RqState& rq, int64_t now_jiffies, int64_t period_jiffies);

// ProcessRef is what a policy is told about a cache group (the kernel's
// sched_cache_group, docs/MODEL.md, Cache groups): the unit a policy keeps
// its state for and decides for. By default a process is its own group
// (`tgid` the process); a group that samples name (Sample::cache_group,
// `tgid` 0) shares one state between its member processes, and its thread
// count and footprint are their sums. `slot` is a dense index the engine
// assigns (reused after the group ends), so policies can keep their
// per-group state in a vector.
//
// `epoch` is the kernel's group epoch (sched_cache_group's). It depends on
// no policy's decisions (it starts at the epoch of the first sample's CPU,
// and a scan trigger raises it to the triggering CPU's epoch), so the
// engine keeps it once per group and decides the scan triggers with it
// (kernel task_tick_cache); policies read it, e.g. for the affinity
// timeout.
struct ProcessRef {
  uint32_t slot = 0;
  int32_t tgid = 0;             // the process of an own group; 0: named
  // Last value given, else distinct threads sampled (summed over a named
  // group's members, saturating).
  int32_t nr_threads = 0;
  int64_t footprint_pages = 0;  // last value given, else 0 (summed likewise)
  int64_t epoch = 0;
};

// ThreadRef is what a policy is told about one thread.
struct ThreadRef {
  int32_t tid = 0;
  int32_t numa_node = -1;  // preferred node, -1: none
  int32_t cpu = -1;        // the CPU it runs on (kernel: task_cpu)
};

// TickScans is the trigger rule of kernel task_tick_cache: a tick on a CPU
// whose epoch is ahead of the process's is a scan trigger, and the process's
// epoch then becomes the CPU's. One rule for the engine and the benchmarks
// that drive the kernel model directly.
inline bool TickScans(int64_t process_epoch, int64_t cpu_epoch) {
  return process_epoch < cpu_epoch;
}

// ScanOutcome says what one policy did at one scan trigger.
struct ScanOutcome {
  enum class Kind {
    kNoScan,            // the policy keeps no scans at all (`none`)
    kSkipped,           // the next_scan gate was closed
    kSkippedDisabled,   // the session is disabled (`enable`), nothing runs
    kAborted,           // invalid_nr or exceeds_capacity before the loop
    kExecuted,
  };
  Kind kind = Kind::kNoScan;
  ScanCost cost;  // zero unless executed
  // llc_occupancy is the summed occupancy of each LLC an executed scan
  // examined, in its visiting order; a view of the policy's own record,
  // valid until the policy's next scan or Forget (of any process). Empty
  // when not executed, or for a policy that keeps no occupancy.
  absl::Span<const LlcOccupancy> llc_occupancy = {};

  // skipped is true for either kind of skip.
  bool skipped() const {
    return kind == Kind::kSkipped || kind == Kind::kSkippedDisabled;
  }
};

class ModelContext {
 public:
  // REQUIRES: tunables valid (ModelTunables::FromValues).
  ModelContext(std::shared_ptr<const Topology> topology, ModelTunables tunables);

  const Topology& topology() const { return *topology_; }
  const ModelTunables& tunables() const { return tunables_; }
  // enabled is the `enable` tunable (docs/MODEL.md): on, or auto on a machine
  // where some NUMA node has two LLCs.
  bool enabled() const { return enabled_; }

  // Topology tables, indexed by CPU os index / LLC id. REQUIRES: valid ids.
  int llc_of(int cpu) const { return llc_of_[cpu]; }
  int node_of(int cpu) const { return node_of_[cpu]; }
  // smt_threads is the kernel's cpu_smt_num_threads as invalid_llc_nr
  // reads it: one number for the whole machine, the largest number of
  // hardware threads of any core, when SMT is active (some core has two
  // online CPUs: sched_smt_active()), else 1.
  int smt_threads() const { return smt_threads_; }
  // llc_span is the online CPUs of an LLC (kernel: sched_domain_span(sd_llc)).
  const CpuSet& llc_span(int llc) const { return llc_span_[llc]; }
  // llc_size is the number of online CPUs of an LLC (kernel: sd_llc_size).
  int llc_size(int llc) const { return llc_size_[llc]; }
  // has_llc_domain is true when the CPUs of `llc` have a cache-sharing
  // sched domain (kernel: per_cpu(sd_llc, cpu) != NULL). A domain of one
  // CPU degenerates (sd_degenerate), so a CPU alone online in its LLC has
  // none, and task_cache_work skips it.
  bool has_llc_domain(int llc) const { return llc_size_[llc] >= 2; }
  int64_t llc_bytes(int llc) const { return llc_bytes_[llc]; }
  // node_span is the online CPUs of a NUMA node, empty for an unknown node.
  const CpuSet& node_span(int node) const;
  const CpuSet& online() const { return topology_->online_cpus(); }
  int num_cpu_slots() const { return static_cast<int>(llc_of_.size()); }

  // epoch_period is the epoch length in jiffies
  // (ModelTunables::epoch_period()).
  int64_t epoch_period() const { return epoch_period_; }
  // jiffy_clock maps timestamps to jiffies (ModelTunables::jiffy_clock()).
  const JiffyClock& jiffy_clock() const { return jiffy_clock_; }

  // started is true once the first timestamp of the session is known.
  bool started() const { return started_; }
  // Start puts every rq's first cpu_epoch_next at the first epoch boundary
  // at or after `first_jiffy`, the session's first: the boundaries are
  // epoch_anchor_jiffies + k * epoch_period, or begin at first_jiffy
  // without an epoch anchor (docs/MODEL.md, "Epochs in phase").
  void Start(int64_t first_jiffy);

  const RqState& rq(int cpu) const { return rqs_[cpu]; }
  RqState& mutable_rq(int cpu) { return rqs_[cpu]; }
  // Advance brings rq `cpu` to jiffy `now` (the per-CPU half of decay()).
  // Inline: a full scan calls it for every CPU it visits.
  void Advance(int cpu, int64_t now) {
    RqState& rq = rqs_[cpu];
    if (now > rq.cpu_epoch_next) AdvanceRq(rq, now, epoch_period_);
  }

  // kMaxTimestampNs bounds every timestamp the model takes (2^62 ns, 146
  // years): with the tunables' ranges (anchors at most 2^62, a jiffy at
  // least 10 us, a period below 2^32 jiffies), jiffies, now +
  // epoch_period and the decay arithmetic then never overflow 64 bits.
  static constexpr int64_t kMaxTimestampNs = int64_t{1} << 62;
  // kMaxJiffies bounds the kernel's jiffies a sample may carry, as the
  // clock anchor's: no jiffy then exceeds that of kMaxTimestampNs.
  static constexpr int64_t kMaxJiffies = int64_t{1} << 62;

 private:
  std::shared_ptr<const Topology> topology_;
  ModelTunables tunables_;
  int64_t epoch_period_;
  JiffyClock jiffy_clock_;
  bool enabled_;
  bool started_ = false;
  std::vector<int> llc_of_;        // by CPU os index, -1 for a hole
  std::vector<int> node_of_;       // by CPU os index
  int smt_threads_ = 1;
  std::vector<CpuSet> llc_span_;
  std::vector<int> llc_size_;
  std::vector<int64_t> llc_bytes_;
  std::vector<int> node_ids_;
  std::vector<CpuSet> node_span_;
  std::vector<RqState> rqs_;       // by CPU os index
};

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_MODEL_CONTEXT_H_
