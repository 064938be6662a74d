// The one place where absl::Status and grpc::Status meet. Canonical codes
// map one to one (both follow google.rpc.Code), so only the types differ.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_COMMON_GRPC_STATUS_H_
#define SCHEDCACHE_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace schedcache {

// ToGrpcStatus converts an absl::Status, keeping its code and message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// ToAbslStatus converts a grpc::Status, keeping its code and message.
absl::Status ToAbslStatus(const grpc::Status& status);

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_GRPC_STATUS_H_
