#include "bench/rpc_probe.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "common/grpc_status.h"

namespace schedcache {
namespace {

constexpr char kHealthCheck[] = "/grpc.health.v1.Health/Check";
constexpr char kRecommend[] = "/schedcache.v1.SchedCache/Recommend";
// HealthCheckResponse{status: SERVING} on the wire: field 1, varint 1.
constexpr char kServingBytes[] = {0x08, 0x01};

}  // namespace

RpcProbe::RpcProbe(std::shared_ptr<grpc::Channel> channel)
    : channel_(std::move(channel)), stub_(channel_) {}

std::shared_ptr<grpc::Channel> RpcProbe::MakeChannel(
    const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 1);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 1);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   args);
}

absl::Status RpcProbe::Call(const std::string& method,
                            const grpc::ByteBuffer& request,
                            grpc::ByteBuffer& response,
                            absl::Duration deadline, bool wait_for_ready) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  context.set_wait_for_ready(wait_for_ready);
  grpc::Status status;
  absl::Notification done;
  stub_.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                  [&](grpc::Status s) {
                    status = std::move(s);
                    done.Notify();
                  });
  done.WaitForNotification();
  return ToAbslStatus(status);
}

absl::StatusOr<bool> RpcProbe::HealthServing(absl::Duration deadline,
                                             bool wait_for_ready) {
  // HealthCheckRequest{service: ""} has no bytes; a ByteBuffer needs a
  // slice, even an empty one.
  grpc::Slice empty;
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  absl::Status status =
      Call(kHealthCheck, request, response, deadline, wait_for_ready);
  if (!status.ok()) return status;
  grpc::Slice slice;
  if (!response.TrySingleSlice(&slice).ok() &&
      !response.DumpToSingleSlice(&slice).ok()) {
    return absl::DataLossError("unreadable health check response");
  }
  return slice.size() == sizeof(kServingBytes) &&
         std::equal(slice.begin(), slice.end(),
                    reinterpret_cast<const uint8_t*>(kServingBytes));
}

absl::Status RpcProbe::Recommend(const v1::RecommendRequest& request,
                                 absl::Duration deadline) {
  const std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  grpc::ByteBuffer buffer(&slice, 1);
  grpc::ByteBuffer response;
  absl::Status status = Call(kRecommend, buffer, response, deadline, false);
  if (!status.ok()) return status;
  grpc::Slice out;
  if (!response.DumpToSingleSlice(&out).ok()) {
    return absl::DataLossError("unreadable Recommend response");
  }
  v1::RecommendResponse parsed;
  if (!parsed.ParseFromArray(out.begin(), static_cast<int>(out.size()))) {
    return absl::DataLossError("Recommend response does not parse");
  }
  return absl::OkStatus();
}

LatencySummary Summarize(std::vector<int64_t> latencies_ns) {
  LatencySummary s;
  s.count = static_cast<int64_t>(latencies_ns.size());
  if (latencies_ns.empty()) return s;
  std::sort(latencies_ns.begin(), latencies_ns.end());
  auto rank = [&](double q) {
    const size_t i = static_cast<size_t>(
        std::ceil(q * static_cast<double>(latencies_ns.size()))) ;
    return static_cast<double>(latencies_ns[std::max<size_t>(i, 1) - 1]) / 1e3;
  };
  s.p50_us = rank(0.50);
  s.p99_us = rank(0.99);
  s.p999_us = rank(0.999);
  s.max_us = static_cast<double>(latencies_ns.back()) / 1e3;
  return s;
}

}  // namespace schedcache
