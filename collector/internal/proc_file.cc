#include "collector/internal/proc_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace schedcache::host::internal {

absl::StatusOr<std::string> ReadProcFile(const std::string& path) {
  // POSIX calls rather than a stream, for a reliable errno.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string text;
  int error = fd < 0 ? errno : 0;
  if (fd >= 0) {
    char chunk[4096];
    ssize_t got = 0;
    while ((got = ::read(fd, chunk, sizeof(chunk))) > 0) {
      text.append(chunk, static_cast<std::size_t>(got));
    }
    if (got < 0) error = errno;
    ::close(fd);
  }
  if (error == ENOENT || error == ESRCH) {
    return absl::NotFoundError(
        absl::StrCat(path, " is gone: ", std::strerror(error)));
  }
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
  }
  return text;
}

}  // namespace schedcache::host::internal
