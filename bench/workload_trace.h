// WriteWorkloadTrace: a generated workload written as the ftrace text a
// recording of it would be (trace/ftrace_writer.h), so bench/ can time trace
// replay on inputs of any size without shipping a capture.
//
// The generator's output is what SchedStateMachine made of its simulated
// context switches; every HandOver is one of those switches, so writing a
// sched_switch line per hand-over (prev: the thread the CPU was handed to
// last, or the idle task) gives back the switches, and a replay at the same
// hz makes the same samples and ticks again. A thread's first switch-in
// names it with its comm, as ftrace's next_comm does, so the names come
// from a first run of the generator that only collects them: the stream of
// a seed never changes, so both runs see the same threads.
//
// What a replay sees differently from the generator: the tgid column names
// only the running (prev) task, so a thread's tgid is known from its first
// switch-out on; until then its pid stands in, as in a real capture. The
// simulator does not say why a thread left its CPU, so every prev_state is
// S (sleeping); workloads have no exits, where it would matter.
//
// Thread contract: a plain function, thread-compatible.
#ifndef SCHEDCACHE_BENCH_WORKLOAD_TRACE_H_
#define SCHEDCACHE_BENCH_WORKLOAD_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "eval/workload/workload.h"
#include "topology/topology.h"

namespace schedcache {

struct WorkloadTraceStats {
  int64_t lines = 0;       // sched_switch lines written
  int64_t samples = 0;     // the generator's samples, ticks included
  int64_t last_switch_ns = 0;
};

// WriteWorkloadTrace generates `options` on `topology` with no preferred LLC
// (a kernel without cache-aware placement) and writes its switches to
// `path` (".gz": compressed). Returns the generator's or the writer's error.
absl::StatusOr<WorkloadTraceStats> WriteWorkloadTrace(
    const Topology& topology, const WorkloadOptions& options,
    const std::string& path);

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_WORKLOAD_TRACE_H_
