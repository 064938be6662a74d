// UnixSocketClaim: one server's hold on a Unix socket path, taken and given
// back without races.
//
// Binding a socket at its path directly goes wrong three ways. bind creates
// the file with mode 0777 & ~umask, so until a chmod it is wider than its
// final 0600 (0777 under umask 000), and anyone may connect in that instant;
// fchmod before bind cannot help, since Linux ignores the mode of an AF_UNIX
// socket's descriptor. Two servers starting together both see the path free
// (or both see a stale socket), and gRPC unlinks whatever is at a path
// before it binds there, so the second removes the first one's live socket.
// And a stopping server removes the path even if another server's socket is
// there by then.
//
// So a claim takes three steps. (1) A lock file beside the socket,
// PATH.lock, is flock'ed for the claim's lifetime: whoever holds it owns
// PATH, and a server that cannot take it never touches PATH. (2) The socket
// is bound inside a fresh private directory (mkdtemp: mode 0700, so nobody
// else can reach the socket there, whatever its own mode), set to 0600
// there, and then renamed onto PATH, which atomically replaces a stale
// socket: PATH only ever holds the final file. Its mode (0600 unless
// --socket_mode says otherwise) and group (--socket_group) are set while it
// is still in the private directory, so it is never wider than final. (3) On
// release, PATH is removed only while it is still the socket this claim put
// there (same device and inode), then the lock is dropped. PATH.lock itself
// stays: were it removed, a server that had opened the old file and one that
// creates a new one could both hold "the" lock.
//
// Thread contract: thread-compatible; the file system calls are safe to
// make from any thread.
#ifndef SCHEDCACHE_SERVER_UNIX_SOCKET_CLAIM_H_
#define SCHEDCACHE_SERVER_UNIX_SOCKET_CLAIM_H_

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace schedcache {

// SocketAccess: who may connect to a published socket.
struct SocketAccess {
  mode_t mode = 0600;
  absl::optional<gid_t> group;  // unset: the server's own group
};

// ParseSocketAccess reads the --socket_mode (octal, at most 0777) and
// --socket_group (a group name or a numeric gid; empty: unset) texts.
// Returns InvalidArgument naming the flag and the value otherwise.
absl::StatusOr<SocketAccess> ParseSocketAccess(absl::string_view mode,
                                               absl::string_view group);

class UnixSocketClaim {
 public:
  // kBindSuffixLength is how much longer the bind path is than PATH
  // (".XXXXXX/s"), which ParseListenAddress leaves room for.
  static constexpr size_t kBindSuffixLength = 9;

  // Claim takes `path` for this process: creates each missing directory
  // above it (mode 0700, grandparents too), takes PATH.lock and makes the
  // private directory to bind in. Returns AlreadyExists when another server
  // holds PATH.lock, or answers on PATH without using the lock;
  // FailedPrecondition when PATH is something other than a socket, or
  // PATH.lock other than a regular file; Unavailable for a file-system
  // error. Each message names the path.
  static absl::StatusOr<std::unique_ptr<UnixSocketClaim>> Claim(
      const std::string& path, SocketAccess access = {});

  ~UnixSocketClaim();  // Release()
  UnixSocketClaim(const UnixSocketClaim&) = delete;
  UnixSocketClaim& operator=(const UnixSocketClaim&) = delete;

  const std::string& path() const { return path_; }
  // bind_path is where the server binds: inside the private directory.
  const std::string& bind_path() const { return bind_path_; }

  // Publish gives the socket at bind_path() the claim's group and mode and
  // renames it onto path(), then removes the private directory. Errors
  // (Unavailable) name the path, and the gid when chown is refused.
  // REQUIRES: a socket is bound at bind_path().
  absl::Status Publish();

  // Release removes path() if it still is the socket Publish put there,
  // removes the private directory if it is still there, and drops the
  // lock. Idempotent.
  void Release();

 private:
  UnixSocketClaim(std::string path, SocketAccess access, int lock_fd,
                  std::string private_dir);

  const std::string path_;
  const SocketAccess access_;
  int lock_fd_;              // -1 once released
  std::string private_dir_;  // empty once removed
  const std::string bind_path_;
  bool published_ = false;
  dev_t published_device_ = 0;
  ino_t published_inode_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_UNIX_SOCKET_CLAIM_H_
