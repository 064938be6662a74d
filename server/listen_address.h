// ListenAddress: where schedcached listens, parsed from `--listen` values,
// and the Unix-socket housekeeping around binding one (parent directory,
// stale socket files, permissions).
//
// Thread contract: values; the functions touch the file system and are safe
// to call from any thread, but not concurrently for the same path.
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
};

// ParseListenAddress reads "unix:PATH" (PATH absolute or relative),
// "HOST:PORT", "[V6]:PORT", or ":PORT" (loopback, 127.0.0.1). Returns
// InvalidArgument naming the text otherwise.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text);

// PrepareUnixSocket makes `path` bindable: creates each missing directory
// above it (mode 0700, grandparents too), and removes a socket file left by a server that
// no longer answers. Returns AlreadyExists when a server answers on it, and
// FailedPrecondition when the path is something other than a socket.
absl::Status PrepareUnixSocket(const std::string& path);

// RestrictUnixSocket sets the socket file's mode to 0600 (owner only).
absl::Status RestrictUnixSocket(const std::string& path);

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_LISTEN_ADDRESS_H_
