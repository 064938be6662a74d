// IngestLoad: S concurrent Ingest streams, one session each (a session's
// samples are applied in order by one writer, so streams cannot share one),
// replaying a recorded Redis-like stream in columnar batches of B samples
// (and the hand-overs between them) for a fixed time, with timestamps
// shifted on every pass so they keep increasing;
// meanwhile a separate client times Recommend and the health check at a
// fixed rate through the same call path (RpcProbe).
//
// Thread contract: RunIngestLoad is a blocking call that runs its own
// threads and joins them.
#ifndef SCHEDCACHE_BENCH_INGEST_LOAD_H_
#define SCHEDCACHE_BENCH_INGEST_LOAD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/redis_stream.h"
#include "bench/rpc_probe.h"

namespace schedcache {

struct IngestLoadOptions {
  std::string address;                  // the server, "unix:PATH" or HOST:PORT
  int streams = 1;                      // S
  int batch_samples = 1024;             // B (plus the hand-overs between)
  absl::Duration duration = absl::Seconds(5);
  std::vector<std::string> policies = {"full-scan", "visited-scan"};
  std::string topology = "synthetic:pack:2 numa:1 l3:12 core:8 pu:2";
  double events_per_second = 0;         // all streams together; 0: unlimited
  double queries_per_second = 200;      // Recommend + health pairs; 0: none
};

struct IngestLoadResult {
  int64_t events_sent = 0;
  int64_t samples_sent = 0;  // events that are not hand-overs
  int64_t accepted = 0;      // the servers' summaries, all streams
  int64_t rejected = 0;
  absl::Duration elapsed;
  LatencySummary recommend;
  LatencySummary health;
  int64_t query_errors = 0;
};

// BatchEnds splits `stream` as RunIngestLoad sends it: the end (an index
// into stream.events, exclusive) of each batch of `batch_samples` samples
// and the hand-overs and exits that follow them. REQUIRES: batch_samples >= 1.
std::vector<size_t> BatchEnds(const RecordedStream& stream, int batch_samples);

// EngineCpuPerSample is the in-process reference of an ingest run: the CPU
// time this thread spends per sample applying `stream` to an Engine running
// `policies` (tick trigger, as the load's sessions), in the batches
// RunIngestLoad sends, one Engine::ApplyBatch each; `passes` passes, each
// through a fresh engine built outside the timing. Returns the first
// rejection (the recorded stream has none) or InvalidArgument when there is
// nothing to time.
absl::StatusOr<absl::Duration> EngineCpuPerSample(
    const RecordedStream& stream, const std::vector<std::string>& policies,
    int batch_samples, int passes);

// RunIngestLoad creates the sessions ("bench-<pid>-<i>"), runs the load and
// deletes them. Returns the first session or stream error.
absl::StatusOr<IngestLoadResult> RunIngestLoad(
    const RecordedStream& stream, const IngestLoadOptions& options);

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_INGEST_LOAD_H_
