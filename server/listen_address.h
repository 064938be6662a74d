// ListenAddress: where schedcached listens, parsed from `--listen` values.
// Binding a Unix socket is UnixSocketClaim's (unix_socket_claim.h).
//
// Thread contract: values and a pure function.
#ifndef SCHEDCACHE_SERVER_LISTEN_ADDRESS_H_
#define SCHEDCACHE_SERVER_LISTEN_ADDRESS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache {

struct ListenAddress {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kUnix;
  std::string path;  // kUnix: socket file path
  std::string host;  // kTcp: host name or IP (IPv6 without brackets)
  int port = 0;      // kTcp: 0..65535; 0 picks a free port

  // ToGrpcUri renders the address for grpc::ServerBuilder / CreateChannel:
  // "unix:PATH", "HOST:PORT" or "[V6]:PORT".
  std::string ToGrpcUri() const;
  // WithPort returns a TCP address with `port` (used once port 0 resolved).
  ListenAddress WithPort(int port) const;
  // IsLoopback: a TCP address only this host can reach: "localhost" or an
  // IP literal in 127.0.0.0/8 or ::1 (IPv4-mapped too). Any other host name
  // is taken as reachable from outside, since it may resolve that way.
  bool IsLoopback() const;
};

// ParseListenAddress reads "unix:PATH" (PATH absolute or relative, at most
// 98 bytes: the socket is bound at a longer path first, which must fit a
// sockaddr_un), "HOST:PORT", "[V6]:PORT", or ":PORT" (loopback, 127.0.0.1).
// Returns InvalidArgument naming the text otherwise.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_LISTEN_ADDRESS_H_
