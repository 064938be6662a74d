// PrivateBpffs: the bpffs of a kernel test. It enters a mount namespace of
// its own (so the mount dies with the test process and nobody else sees
// it), mounts a bpffs on a new temporary directory and checks that bpf()
// itself is allowed; or it says exactly why it cannot, which the test
// prints when it skips. Children forked afterwards (schedcached, the
// schedcache CLI) inherit the namespace and see the same bpffs.
//
// Thread contract: call Mount once per process, before starting threads
// (unshare(CLONE_NEWNS) refuses a multi-threaded caller).
#ifndef SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_H_
#define SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache::test_support {

// MountPrivateBpffs mounts a bpffs on a new directory named after
// `name_prefix` under /tmp in a private mount namespace and returns its
// path; FailedPrecondition (or the bpf() refusal) saying what is missing:
// root, unshare, the mount, or bpf().
absl::StatusOr<std::string> MountPrivateBpffs(absl::string_view name_prefix);

// UnmountPrivateBpffs detaches the bpffs at `root` and removes the
// directory.
void UnmountPrivateBpffs(const std::string& root);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_H_
