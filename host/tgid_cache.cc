#include "host/tgid_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace schedcache::host {

TgidCache::TgidCache(std::string proc_root)
    : proc_root_(std::move(proc_root)) {}

absl::StatusOr<int> TgidCache::Tgid(int tid) {
  if (tid == 0) return 0;
  if (const auto it = tgid_by_tid_.find(tid); it != tgid_by_tid_.end()) {
    return it->second;
  }
  ASSIGN_OR_RETURN(const int tgid, ReadTgid(tid));
  tgid_by_tid_.emplace(tid, tgid);
  return tgid;
}

void TgidCache::Forget(int tid) { tgid_by_tid_.erase(tid); }

absl::StatusOr<int> TgidCache::ReadTgid(int tid) const {
  const std::string path = absl::StrCat(proc_root_, "/", tid, "/status");
  // POSIX calls rather than a stream, for a reliable errno: ENOENT (and
  // ESRCH while the task is being reaped) mean the thread is gone.
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
    return absl::NotFoundError(absl::StrCat("thread ", tid, " is gone (", path,
                                            ": ", std::strerror(error), ")"));
  }
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
  }
  return ParseTgidFromStatus(text, path);
}

absl::StatusOr<int> ParseTgidFromStatus(absl::string_view status_text,
                                        absl::string_view source) {
  for (absl::string_view line : absl::StrSplit(status_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Tgid:")) continue;
    const absl::string_view value = absl::StripAsciiWhitespace(line);
    int tgid = 0;
    if (!absl::SimpleAtoi(value, &tgid) || tgid <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": Tgid is not a positive integer: \"", value, "\""));
    }
    return tgid;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": no \"Tgid:\" line"));
}

}  // namespace schedcache::host
