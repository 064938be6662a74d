#include "bpfmaps/testing/private_bpffs.h"

#include <bpf/bpf.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "bpfmaps/pinned_maps.h"

namespace schedcache::test_support {

absl::StatusOr<std::string> MountPrivateBpffs(absl::string_view name_prefix) {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not root (euid ", geteuid(),
        "): mounting a bpffs needs CAP_SYS_ADMIN and the maps need CAP_BPF"));
  }
  if (unshare(CLONE_NEWNS) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("unshare(CLONE_NEWNS) refused: ", std::strerror(errno)));
  }
  // Without this, a shared / would propagate the mount below back out.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("making / rprivate refused: ", std::strerror(errno)));
  }
  std::string pattern = absl::StrCat("/tmp/", name_prefix, "_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  if (mount("bpf", pattern.c_str(), "bpf", 0, nullptr) != 0) {
    const int err = errno;
    rmdir(pattern.c_str());
    return absl::FailedPreconditionError(absl::StrCat(
        "mount -t bpf bpf ", pattern, " refused: ", std::strerror(err)));
  }
  // A tiny map shows whether bpf() itself is allowed.
  const MapFd probe(
      bpf_map_create(BPF_MAP_TYPE_ARRAY, "probe", 4, 4, 1, nullptr));
  if (probe.get() < 0) {
    const absl::Status refused = BpfError(errno, "BPF_MAP_CREATE", "");
    UnmountPrivateBpffs(pattern);
    return refused;
  }
  return pattern;
}

void UnmountPrivateBpffs(const std::string& root) {
  umount2(root.c_str(), MNT_DETACH);
  rmdir(root.c_str());
}

}  // namespace schedcache::test_support
