#include "server/listen_address.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace schedcache {
namespace {

absl::Status ErrnoStatus(absl::string_view what, const std::string& path,
                         int err) {
  return absl::UnavailableError(
      absl::StrCat(what, " ", path, ": ", std::strerror(err)));
}

// ServerAnswers tells whether something accepts connections on the socket.
bool ServerAnswers(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const bool answers =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return answers;
}

}  // namespace

std::string ListenAddress::ToGrpcUri() const {
  if (kind == Kind::kUnix) return absl::StrCat("unix:", path);
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

ListenAddress ListenAddress::WithPort(int new_port) const {
  ListenAddress copy = *this;
  copy.port = new_port;
  return copy;
}

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  ListenAddress address;
  if (absl::ConsumePrefix(&text, "unix:")) {
    if (text.empty()) {
      return absl::InvalidArgumentError("listen address \"unix:\" has no path");
    }
    if (text.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unix socket path \"", text, "\" is longer than ",
                       sizeof(sockaddr_un{}.sun_path) - 1, " bytes"));
    }
    address.kind = ListenAddress::Kind::kUnix;
    address.path = std::string(text);
    return address;
  }
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address \"", text,
        "\" is neither unix:PATH nor HOST:PORT (\":PORT\" means loopback)"));
  }
  absl::string_view host = text.substr(0, colon);
  const absl::string_view port_text = text.substr(colon + 1);
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address \"", text, "\": port \"", port_text,
        "\" is not a number in 0..65535"));
  }
  if (absl::ConsumePrefix(&host, "[") && !absl::ConsumeSuffix(&host, "]")) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", text, "\": unbalanced '['"));
  }
  address.kind = ListenAddress::Kind::kTcp;
  address.host = host.empty() ? "127.0.0.1" : std::string(host);
  address.port = port;
  return address;
}

absl::Status PrepareUnixSocket(const std::string& path) {
  // Every missing directory, not only the socket's own, is made 0700: a
  // directory others can list would show where the service lives.
  // create_directories would make them with the umask's mode (often 0755).
  std::filesystem::path parent;
  for (const std::filesystem::path& part :
       std::filesystem::path(path).parent_path()) {
    parent /= part;
    if (::mkdir(parent.c_str(), S_IRWXU) != 0 && errno != EEXIST) {
      return ErrnoStatus("cannot create directory", parent.string(), errno);
    }
  }
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus("cannot inspect", path, errno);
  }
  if (!S_ISSOCK(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " exists and is not a socket; refusing to replace it"));
  }
  if (ServerAnswers(path)) {
    return absl::AlreadyExistsError(
        absl::StrCat("a server already answers on ", path));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus("cannot remove stale socket", path, errno);
  }
  return absl::OkStatus();
}

absl::Status RestrictUnixSocket(const std::string& path) {
  if (::chmod(path.c_str(), S_IRUSR | S_IWUSR) != 0) {
    return ErrnoStatus("cannot chmod 0600", path, errno);
  }
  return absl::OkStatus();
}

}  // namespace schedcache
