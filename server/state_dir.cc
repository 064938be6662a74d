#include "server/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errno_status.h"

namespace schedcache {
namespace {

constexpr absl::string_view kSuffix = ".session";
constexpr absl::string_view kTemporaryMark = ".session.tmp.";

// WriteAll writes `bytes` to `fd`, resuming after short writes.
absl::Status WriteAll(int fd, absl::string_view bytes,
                      absl::string_view path) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) {
      return ErrnoError(absl::StatusCode::kInternal,
                        absl::StrCat(path, ": write failed"), errno);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return absl::OkStatus();
}

// ReadAll reads the whole regular file at `path`.
absl::StatusOr<std::string> ReadAll(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat(path, ": open failed"), errno);
  }
  const absl::Cleanup close_fd = [fd] { ::close(fd); };
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return ErrnoError(absl::StatusCode::kFailedPrecondition,
                        absl::StrCat(path, ": read failed"), errno);
    }
    if (got == 0) return bytes;
    bytes.append(buffer, static_cast<size_t>(got));
  }
}

// ParseDefinition reads the definition stored in `file`, whose name says
// which session it must hold.
absl::StatusOr<v1::CreateSessionRequest> ParseDefinition(
    const std::string& file, absl::string_view expected_name) {
  absl::StatusOr<std::string> bytes = ReadAll(file);
  if (!bytes.ok()) return bytes.status();
  v1::CreateSessionRequest definition;
  if (!definition.ParseFromString(*bytes)) {
    return absl::DataLossError(
        absl::StrCat(file, ": not a schedcache.v1.CreateSessionRequest (",
                     bytes->size(), " bytes); a corrupt or foreign file"));
  }
  if (definition.name() != expected_name) {
    return absl::DataLossError(absl::StrCat(
        file, ": holds session \"", absl::CHexEscape(definition.name()),
        "\", not the \"", expected_name, "\" its file name says"));
  }
  return definition;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StateDir>> StateDir::Open(std::string path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("state directory: the path is empty");
  }
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat(path, ": creating the state directory (mkdir) failed"),
        errno);
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    return ErrnoError(absl::StatusCode::kFailedPrecondition,
                      absl::StrCat(path, ": stat failed"), errno);
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the state directory is not a directory"));
  }
  // Writing is what the directory is for: find out now, not at the first
  // CreateSession (as root, a mode check would say yes where a read-only
  // file system says no).
  std::string probe = absl::StrCat(path, "/.write-probe.XXXXXX");
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    return ErrnoError(
        absl::StatusCode::kFailedPrecondition,
        absl::StrCat(
            path,
            ": the state directory is not writable: creating a file failed"),
        errno);
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return std::unique_ptr<StateDir>(new StateDir(std::move(path)));
}

std::string StateDir::FileOf(absl::string_view name) const {
  // Session names are 1 to 64 of [A-Za-z0-9_.-] (session_config.h), so
  // they are file names as they are.
  return absl::StrCat(path_, "/", name, kSuffix);
}

absl::Status StateDir::SyncDirectory() const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoError(absl::StatusCode::kInternal,
                      absl::StrCat(path_, ": open failed"), errno);
  }
  const absl::Cleanup close_fd = [fd] { ::close(fd); };
  if (::fsync(fd) != 0) {
    return ErrnoError(absl::StatusCode::kInternal,
                      absl::StrCat(path_, ": fsync failed"), errno);
  }
  return absl::OkStatus();
}

absl::Status StateDir::Save(const v1::CreateSessionRequest& definition) const {
  const std::string file = FileOf(definition.name());
  std::string bytes;
  if (!definition.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat(file, ": the definition does not serialise"));
  }
  std::string temporary = absl::StrCat(file, ".tmp.XXXXXX");
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    return ErrnoError(absl::StatusCode::kInternal,
                      absl::StrCat(file, ": creating a temporary file failed"),
                      errno);
  }
  bool renamed = false;
  const absl::Cleanup remove_temporary = [&] {
    if (!renamed) ::unlink(temporary.c_str());
  };
  {
    const absl::Cleanup close_fd = [fd] { ::close(fd); };
    if (absl::Status written = WriteAll(fd, bytes, temporary); !written.ok()) {
      return written;
    }
    if (::fsync(fd) != 0) {
      return ErrnoError(absl::StatusCode::kInternal,
                        absl::StrCat(temporary, ": fsync failed"), errno);
    }
  }
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    return ErrnoError(
        absl::StatusCode::kInternal,
        absl::StrCat(file, ": rename from ", temporary, " failed"), errno);
  }
  renamed = true;
  return SyncDirectory();
}

absl::Status StateDir::Remove(absl::string_view name) const {
  const std::string file = FileOf(name);
  if (::unlink(file.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoError(absl::StatusCode::kInternal,
                      absl::StrCat(file, ": unlink failed"), errno);
  }
  return SyncDirectory();
}

std::vector<StateDir::StoredDefinition> StateDir::Load() const {
  std::vector<StoredDefinition> stored;
  DIR* dir = ::opendir(path_.c_str());
  if (dir == nullptr) {
    stored.push_back(
        {path_, ErrnoError(absl::StatusCode::kFailedPrecondition,
                           absl::StrCat(path_, ": opendir failed"), errno)});
    return stored;
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) names.emplace_back(entry->d_name);
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string file = absl::StrCat(path_, "/", name);
    if (absl::StrContains(name, kTemporaryMark)) {
      ::unlink(file.c_str());
      stored.push_back({file, absl::DataLossError(absl::StrCat(
                                  file, ": an interrupted write; removed"))});
    } else if (absl::EndsWith(name, kSuffix)) {
      const absl::string_view session =
          absl::string_view(name).substr(0, name.size() - kSuffix.size());
      stored.push_back({file, ParseDefinition(file, session)});
    }
  }
  return stored;
}

}  // namespace schedcache
