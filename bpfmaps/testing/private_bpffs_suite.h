// PrivateBpffsSuite: the GoogleTest fixture base of kernel tests that pin
// maps (private_bpffs.h). The suite mounts one private bpffs before its
// first test, named after kName, and unmounts it after its last; every
// test skips, saying why, where the mount or bpf() is refused. A test that
// wants the bpffs calls SkipWithoutBpffs() first in its SetUp.
//
// Thread contract: GoogleTest's; the suite's mount is made before the
// test starts any thread, as MountPrivateBpffs requires.
#ifndef SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_SUITE_H_
#define SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_SUITE_H_

#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "bpfmaps/testing/private_bpffs.h"

namespace schedcache::test_support {

template <const char *kName>
class PrivateBpffsSuite : public ::testing::Test {
 protected:
  // Root is the bpffs's directory; empty when it could not be mounted.
  static const std::string &Root() { return Storage().root; }

  static void SetUpTestSuite() {
    absl::StatusOr<std::string> root = MountPrivateBpffs(kName);
    if (root.ok()) {
      Storage().root = *root;
    } else {
      Storage().skip_reason = std::string(root.status().message());
    }
  }
  static void TearDownTestSuite() {
    if (!Root().empty()) UnmountPrivateBpffs(Root());
    Storage() = {};
  }

  // SkipWithoutBpffs skips the test, saying why, when the suite has no
  // bpffs; the caller returns when IsSkipped().
  static void SkipWithoutBpffs() {
    if (!Storage().skip_reason.empty()) {
      GTEST_SKIP() << Storage().skip_reason;
    }
  }

 private:
  struct State {
    std::string root;
    std::string skip_reason;
  };
  static State &Storage() {
    static State *const state = new State;
    return *state;
  }
};

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_BPFMAPS_TESTING_PRIVATE_BPFFS_SUITE_H_
