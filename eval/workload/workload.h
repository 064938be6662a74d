// Workload generator: deterministic, seeded synthetic scheduler workloads on
// any Topology, delivered as Samples and HandOvers through an EventSink in
// time order (the same shape as trace replay: both go through
// SchedStateMachine). Placement follows each process's preferred LLC, read
// through a callback, the way a cache-aware kernel's wake-up path does (see
// simulator.h), so the CPUs a process visits look like a real kernel's.
//
// Kinds:
//  - redis: `instances` independent server+benchmark pairs. A server
//    process has `server_threads` threads ("redis-server", then "io_thd_N")
//    and a benchmark process `client_threads` threads ("redis-benchmark").
//    Each client thread sends a request to server thread (client index mod
//    server_threads) of its own instance and sleeps until the response: a
//    ping-pong of short bursts (client_burst_*, server_burst_*). A server
//    thread with requests waiting keeps running.
//  - valkey: redis in the shape of the seed's multi-instance run (a
//    384-CPU EPYC 9654, valkey-benchmark at 400,000 requests/s; the sizes
//    and their derivation at kValkeyShape in workload.cc and in
//    docs/EVALUATION.md), with the seed's comms: "redis-server" and
//    "valkey-benchmar" (the benchmark's name cut to the kernel's 15-byte
//    comm).
//  - hackbench: `hackbench -T -g groups -f fds`: in thread mode every group
//    lives in ONE process (tgid), with a main thread that only waits, and
//    per group `fds` senders and `fds` receivers. A sender sends messages
//    round-robin to its group's receivers (message_burst_* each) and blocks
//    when a receiver has `socket_window` unread messages, until that
//    receiver drains half of them; a receiver reads while it has messages.
//
// Ids, given out in order like the kernel's pids (a process's tgid is its
// first thread's tid, its other threads follow): redis and valkey servers
// from 1000 (instance i's server has tgid 1000 + i * server_threads), then
// the benchmarks from the next multiple of 1000 above the last server tid
// (2000 while the servers have at most 1000 threads in all; instance i's
// benchmark has tgid 2000 + i * client_threads); hackbench tgid 3000, main
// thread 3000, workers 3001....
//
// Determinism: the same options (seed included), topology and callback
// answers give the same event stream on any platform (DeterministicRandom).
//
// Thread contract: RunWorkload calls `sink` and `preferred_llc` from the
// calling thread only.
#ifndef SCHEDCACHE_EVAL_WORKLOAD_WORKLOAD_H_
#define SCHEDCACHE_EVAL_WORKLOAD_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/model_defaults.h"
#include "eval/workload/simulator.h"
#include "events/event_sink.h"
#include "topology/topology.h"

namespace schedcache {

enum class WorkloadKind { kRedis, kValkey, kHackbench };

// ParseWorkloadKind reads "redis", "valkey" or "hackbench"; InvalidArgument
// naming the text otherwise.
absl::StatusOr<WorkloadKind> ParseWorkloadKind(absl::string_view name);

// kMaxWorkloadThreads bounds each thread count of a workload.
inline constexpr int kMaxWorkloadThreads = 100'000;

struct WorkloadOptions {
  WorkloadKind kind = WorkloadKind::kRedis;
  uint64_t seed = 1;
  int64_t start_ns = 0;                  // timestamp of the first event
  int64_t duration_ns = 1'000'000'000;   // simulated time, > 0
  int hz = kDefaultHz;                   // tick rate, as TraceOptions::hz
  double spill_probability = 0.02;       // per wake-up, 0..1; simulator.h
  int64_t slice_ns = 3'000'000;          // time slice before preemption
  // numa_preferred_node: every Sample carries its thread's preferred NUMA
  // node (Sample::numa_node), the node of the CPU its process first ran
  // on, where NUMA balancing settles a process that stays in one place. For
  // evaluations with numa_balancing on; off, samples leave it unchanged.
  bool numa_preferred_node = false;

  // redis and valkey; 0 in any of these three takes the kind's own size
  // (RedisShapeOf).
  int instances = 0;
  int server_threads = 0;  // per instance
  int client_threads = 0;  // per instance
  int64_t server_burst_min_ns = 5'000;
  int64_t server_burst_max_ns = 20'000;
  int64_t client_burst_min_ns = 10'000;
  int64_t client_burst_max_ns = 30'000;

  // hackbench
  int groups = 4;
  int fds = 10;
  int64_t message_burst_min_ns = 2'000;
  int64_t message_burst_max_ns = 8'000;
  int socket_window = 8;
};

// RedisShape is the resolved shape of a redis or valkey workload.
struct RedisShape {
  int instances = 1;
  int server_threads = 4;
  int client_threads = 8;
  absl::string_view server_comm = "redis-server";
  absl::string_view client_comm = "redis-benchmark";
};

// RedisShapeOf resolves `options` (kind redis or valkey): each size that is
// 0 in `options` takes the kind's own, the others are kept.
RedisShape RedisShapeOf(const WorkloadOptions& options);

// ValidateWorkloadOptions returns InvalidArgument naming the first field out
// of range (counts >= 1, the redis sizes >= 0 with at most
// kMaxWorkloadThreads threads in all, bursts 1 <= min <= max, probability in
// [0, 1]...).
absl::Status ValidateWorkloadOptions(const WorkloadOptions& options);

// WorkloadProcess describes one generated process.
struct WorkloadProcess {
  int32_t tgid = 0;
  std::string comm;
  int32_t threads = 0;
};

struct WorkloadStats {
  int64_t samples = 0;  // ticks included
  int64_t tick_samples = 0;
  int64_t hand_overs = 0;
  int64_t requests = 0;  // redis and valkey: responses the servers sent
  SimulatorCounters placement;
  std::vector<int64_t> runtime_ns;  // per CPU os index
  std::vector<WorkloadProcess> processes;
};

// RunWorkload generates `options.kind` on `topology`, asking
// `preferred_llc` (may be empty: no preferences) at every wake-up.
// Returns InvalidArgument for bad options, or the sink's error.
absl::StatusOr<WorkloadStats> RunWorkload(const Topology& topology,
                                          const WorkloadOptions& options,
                                          const PreferredLlcFn& preferred_llc,
                                          EventSink& sink);

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_WORKLOAD_WORKLOAD_H_
