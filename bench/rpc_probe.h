// RpcProbe: unary calls made the same way for every method (a generic stub
// over raw bytes), so that the latency of a Recommend and of a health check
// measured through it differ only by what the server does.
//
// Thread contract: thread-safe (calls may run concurrently).
#ifndef SCHEDCACHE_BENCH_RPC_PROBE_H_
#define SCHEDCACHE_BENCH_RPC_PROBE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

class RpcProbe {
 public:
  explicit RpcProbe(std::shared_ptr<grpc::Channel> channel);

  // HealthServing calls grpc.health.v1.Health/Check for the whole server
  // and says whether it answered SERVING. With `wait_for_ready` the call
  // waits for the connection (up to `deadline`) instead of failing fast.
  absl::StatusOr<bool> HealthServing(absl::Duration deadline,
                                     bool wait_for_ready = false);
  // Recommend calls schedcache.v1.SchedCache/Recommend; the answer is
  // parsed (as a client would) and dropped.
  absl::Status Recommend(const v1::RecommendRequest& request,
                         absl::Duration deadline);

  // MakeChannel opens an insecure channel of its own (no subchannel shared
  // with other channels) that retries a refused connection within
  // milliseconds, so start-up is timed to the millisecond.
  static std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address);

 private:
  absl::Status Call(const std::string& method, const grpc::ByteBuffer& request,
                    grpc::ByteBuffer& response, absl::Duration deadline,
                    bool wait_for_ready);

  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
};

// LatencySummary is a set of call latencies, in microseconds.
struct LatencySummary {
  int64_t count = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
};
// Summarize sorts `latencies_ns` and takes nearest-rank percentiles.
LatencySummary Summarize(std::vector<int64_t> latencies_ns);

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_RPC_PROBE_H_
