// ScanState: one process's model state under both seed policies (full-scan
// and visited-scan), built by driving the kernel model directly, so that a
// benchmark times KernelModel::Scan alone: no engine bookkeeping, no
// statistics, no decisions built.
//
// Each scan runs at the state's fixed time with the next_scan gate
// reopened first, so every timed iteration executes a real scan of the same
// state (decay to a fixed time is idempotent, and no visited CPU ages out).
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_BENCH_SCAN_STATE_H_
#define SCHEDCACHE_BENCH_SCAN_STATE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "bench/redis_stream.h"
#include "policies/kernel_model.h"
#include "policies/model_context.h"
#include "topology/topology.h"

namespace schedcache {

class ScanState {
 public:
  // FromStream replays `stream` and keeps the state of process `tgid` at
  // the stream's end. FailedPrecondition when `tgid` never ran.
  static absl::StatusOr<std::unique_ptr<ScanState>> FromStream(
      const RecordedStream& stream, int32_t tgid);

  // Spread makes a process of `threads` sleeping threads that each ran 1 ms
  // in the last epoch on every `stride`-th CPU of `topology` (CPUs 0,
  // stride, 2*stride, ...), beside 1 ms of other work on the same CPUs.
  // InvalidArgument when stride < 1.
  static absl::StatusOr<std::unique_ptr<ScanState>> Spread(
      std::shared_ptr<const Topology> topology, int stride);

  ScanState(const ScanState&) = delete;
  ScanState& operator=(const ScanState&) = delete;

  // Scan runs one scan with `scope`.
  ScanOutcome Scan(ScanScope scope);
  // PreferredLlc is the process's preferred LLC under `scope`, -1 for none.
  int PreferredLlc(ScanScope scope) const;
  // visited_cpus is the size of the visited set (visited-scan's view).
  int visited_cpus() const {
    return static_cast<int>(visited_.mm.visited_entries.size());
  }
  int num_cpus() const { return context_.online().Count(); }

 private:
  struct PolicyState {
    PolicyState(ModelContext& context, ScanScope scope)
        : model(context, scope) {}
    KernelModel model;
    MmState mm;
  };

  explicit ScanState(std::shared_ptr<const Topology> topology);
  PolicyState& state(ScanScope scope) {
    return scope == ScanScope::kAllCpus ? full_ : visited_;
  }
  const PolicyState& state(ScanScope scope) const {
    return scope == ScanScope::kAllCpus ? full_ : visited_;
  }
  // Run charges `delta_ns` on `cpu` at `now` the way the engine does: rq
  // first (starting the process at its first sample), then every policy's
  // Account, then the rq's runtime; a tick in a new epoch of the process
  // then scans. Only process `process_.tgid` is accounted to the
  // policies; other work only loads the rq.
  void Run(int32_t tgid, int32_t tid, int cpu, int64_t delta_ns, bool tick,
           int64_t now);
  // GroupOf is rq.curr_group for a thread of `tgid`: the process's slot,
  // or another one for any other process (the state models one group).
  uint32_t GroupOf(int32_t tgid) const {
    return tgid == process_.tgid ? process_.slot : process_.slot + 1;
  }

  ModelContext context_;
  PolicyState full_;
  PolicyState visited_;
  ProcessRef process_;
  bool started_ = false;  // process_ had a sample (its epoch is set)
  ThreadRef thread_;
  int64_t now_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_SCAN_STATE_H_
