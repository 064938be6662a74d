#include "server/unix_socket_claim.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "common/errno_status.h"

namespace schedcache {
namespace {

// MakeParents creates every missing directory above `path` with mode 0700,
// not only the socket's own: a directory others can list would show where
// the service lives, and create_directories would use the umask's mode.
absl::Status MakeParents(const std::string& path) {
  std::filesystem::path parent;
  for (const std::filesystem::path& part :
       std::filesystem::path(path).parent_path()) {
    parent /= part;
    if (::mkdir(parent.c_str(), S_IRWXU) != 0 && errno != EEXIST) {
      return ErrnoError(
          absl::StatusCode::kUnavailable,
          absl::StrCat("cannot create directory ", parent.string()), errno);
    }
  }
  return absl::OkStatus();
}

// LockBeside opens and flocks PATH.lock, returning its descriptor.
absl::StatusOr<int> LockBeside(const std::string& path) {
  const std::string lock_path = path + ".lock";
  const int fd =
      ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
             S_IRUSR | S_IWUSR);
  if (fd < 0)
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot open lock file ", lock_path), errno);
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        lock_path, " exists and is not a regular file; refusing to use it"));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return absl::AlreadyExistsError(absl::StrCat("another server owns ", path,
                                                   " (it holds the lock ",
                                                   lock_path, ")"));
    }
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot lock ", lock_path), err);
  }
  return fd;
}

// ServerAnswers tells whether something accepts connections on the socket.
bool ServerAnswers(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool answers = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                                 sizeof(addr)) == 0;
  ::close(fd);
  return answers;
}

// CheckReplaceable accepts a missing path or a stale socket (which Publish's
// rename replaces). With the lock held, a live one belongs to a server that
// does not use the lock.
absl::Status CheckReplaceable(const std::string& path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot inspect ", path), errno);
  }
  if (!S_ISSOCK(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " exists and is not a socket; refusing to replace it"));
  }
  if (ServerAnswers(path)) {
    return absl::AlreadyExistsError(
        absl::StrCat("a server already answers on ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SocketAccess> ParseSocketAccess(absl::string_view mode,
                                               absl::string_view group) {
  SocketAccess access;
  mode_t bits = 0;
  // At most four octal digits (a leading 0 is customary) and no more than
  // 0777: set-id and sticky bits mean nothing on a socket.
  bool octal = !mode.empty() && mode.size() <= 4;
  for (const char digit : mode) {
    octal = octal && digit >= '0' && digit <= '7';
    bits = bits * 8 + static_cast<mode_t>(digit - '0');
  }
  if (!octal || bits > 0777) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--socket_mode=", mode, " is not an octal mode from 0 to 0777"));
  }
  access.mode = bits;
  if (group.empty()) return access;
  if (uint32_t gid = 0; absl::SimpleAtoi(group, &gid)) {
    access.group = static_cast<gid_t>(gid);
    return access;
  }
  const std::string name(group);
  std::array<char, 16384> buffer;  // ample for one group entry
  struct group entry;
  struct group* found = nullptr;
  if (::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(),
                   &found) != 0 ||
      found == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--socket_group=", group, ": no such group (a name or numeric gid)"));
  }
  access.group = found->gr_gid;
  return access;
}

absl::StatusOr<std::unique_ptr<UnixSocketClaim>> UnixSocketClaim::Claim(
    const std::string& path, SocketAccess access) {
  if (absl::Status made = MakeParents(path); !made.ok()) return made;
  absl::StatusOr<int> lock_fd = LockBeside(path);
  if (!lock_fd.ok()) return lock_fd.status();
  // From here the claim owns the lock: its destructor releases it.
  std::string pattern = path + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int err = errno;
    ::close(*lock_fd);
    return ErrnoError(
        absl::StatusCode::kUnavailable,
        absl::StrCat("cannot create a private directory beside ", path), err);
  }
  std::unique_ptr<UnixSocketClaim> claim(
      new UnixSocketClaim(path, access, *lock_fd, std::move(pattern)));
  if (absl::Status replaceable = CheckReplaceable(path); !replaceable.ok()) {
    return replaceable;
  }
  return claim;
}

UnixSocketClaim::UnixSocketClaim(std::string path, SocketAccess access,
                                 int lock_fd, std::string private_dir)
    : path_(std::move(path)),
      access_(access),
      lock_fd_(lock_fd),
      private_dir_(std::move(private_dir)),
      bind_path_(private_dir_ + "/s") {}

UnixSocketClaim::~UnixSocketClaim() { Release(); }

absl::Status UnixSocketClaim::Publish() {
  // Group before mode: were the mode set first, the old group would hold
  // it for an instant (harmless in the 0700 directory, but needless).
  if (access_.group.has_value() &&
      ::chown(bind_path_.c_str(), static_cast<uid_t>(-1), *access_.group) !=
          0) {
    return ErrnoError(
        absl::StatusCode::kUnavailable,
        absl::StrCat("cannot give group ", *access_.group, " to ", bind_path_),
        errno);
  }
  if (::chmod(bind_path_.c_str(), access_.mode) != 0) {
    return ErrnoError(
        absl::StatusCode::kUnavailable,
        absl::StrCat(absl::StrFormat("cannot chmod %04o", access_.mode), " ",
                     bind_path_),
        errno);
  }
  if (::rename(bind_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot rename ", bind_path_, " to ", path_),
                      errno);
  }
  struct stat info;
  if (::lstat(path_.c_str(), &info) != 0) {
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot inspect ", path_), errno);
  }
  published_ = true;
  published_device_ = info.st_dev;
  published_inode_ = info.st_ino;
  ::rmdir(private_dir_.c_str());
  private_dir_.clear();
  return absl::OkStatus();
}

void UnixSocketClaim::Release() {
  if (lock_fd_ < 0) return;
  struct stat info;
  if (published_ && ::lstat(path_.c_str(), &info) == 0 &&
      info.st_dev == published_device_ && info.st_ino == published_inode_) {
    ::unlink(path_.c_str());
  }
  if (!private_dir_.empty()) {
    ::unlink(bind_path_.c_str());
    ::rmdir(private_dir_.c_str());
    private_dir_.clear();
  }
  ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace schedcache
