// RedisStream: the benchmarks' shared input. A Redis-like event stream
// (eval/workload, kind redis) on a given topology, generated once with the
// preferred-LLC feedback of a full-scan reference engine (so the CPUs each
// process visits look like a cache-aware kernel's) and kept in memory, so
// the timed loops replay it without generating anything.
//
// Thread contract: plain functions and values; a RecordedStream is
// immutable once made and may be read from several threads.
#ifndef SCHEDCACHE_BENCH_REDIS_STREAM_H_
#define SCHEDCACHE_BENCH_REDIS_STREAM_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/workload/workload.h"
#include "events/recording_sink.h"
#include "policies/engine.h"
#include "policies/policy_registry.h"
#include "topology/topology.h"

namespace schedcache {

// kRedisServerTgid is the tgid the workload generator gives the Redis server.
inline constexpr int32_t kRedisServerTgid = 1000;

struct RecordedStream {
  std::shared_ptr<const Topology> topology;
  std::vector<RecordingSink::Event> events;  // in time order
  int64_t samples = 0;                       // ticks included
  int64_t hand_overs = 0;
  int64_t first_timestamp_ns = 0;
  int64_t last_timestamp_ns = 0;
};

// RedisOptions are the benchmarks' Redis-like workload: `duration_ns` of
// simulated time, with enough threads that the server visits about 16 CPUs
// within the affinity timeout on the 384-CPU shape, as the seed's Redis
// trace does (docs/EVALUATION.md).
WorkloadOptions RedisOptions(int64_t duration_ns);

// RecordStream generates `options` (any workload kind) on the topology named
// by `source` (see LoadTopology). Returns the topology's or the generator's
// error.
absl::StatusOr<RecordedStream> RecordStream(absl::string_view source,
                                            const WorkloadOptions& options);

// ReplayStream applies every event of `stream` to `engine`, with
// `offset_ns` added to each timestamp (so one engine can take the stream
// several times with increasing time), in one batch. Returns the engine's
// first error; the events after a rejected one still apply.
absl::Status ReplayStream(const RecordedStream& stream, int64_t offset_ns,
                          Engine& engine);

// MakeEngine builds an engine over `topology` running `policies` (registry
// names, the first the reference) with default tunables and `trigger`.
absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(
    std::shared_ptr<const Topology> topology, const PolicyRegistry& registry,
    const std::vector<std::string>& policies, ScanTrigger trigger);

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_REDIS_STREAM_H_
