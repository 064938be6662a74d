// schedcache-scx's refusals of the pinned maps, on a bpffs mounted in a
// private mount namespace: maps missing, of another ABI, or without LLCs.
// The sched_ext directory is a fake in the state "disabled", so the checks
// reach the maps on a kernel without sched_ext too; the real registration
// runs in the guest (tests/kernel, scenario scx-smoke). Skipped, saying
// what is missing, where the process may not mount a bpffs or call bpf().
#include <bpf/bpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "bpfmaps/pinned_maps.h"
#include "scx/scx_cli.h"
#include "bpfmaps/testing/private_bpffs_suite.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

constexpr char kSuiteName[] = "scx_kernel_test";

class ScxKernelTest : public test_support::PrivateBpffsSuite<kSuiteName> {
 protected:
  void SetUp() override {
    SkipWithoutBpffs();
    if (IsSkipped()) return;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = absl::StrCat(Root(), "/", info->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0) << std::strerror(errno);
    sched_ext_ = absl::StrCat("/tmp/scx_kernel_test_", getpid(), "_",
                              info->name());
    std::filesystem::create_directories(sched_ext_);
    std::ofstream(sched_ext_ + "/state") << "disabled\n";
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (!sched_ext_.empty()) std::filesystem::remove_all(sched_ext_);
  }

  // Refusal runs schedcache-scx on this test's directory and returns its
  // stderr; expects exit 1 and nothing on stdout.
  std::string Refusal() const {
    std::ostringstream out, err;
    const int code = RunScxCli({"--pin-dir", dir_},
                               {.sched_ext_dir = sched_ext_, .euid = 0}, out,
                               err);
    EXPECT_EQ(code, 1);
    EXPECT_EQ(out.str(), "");
    return err.str();
  }

  std::string dir_;
  std::string sched_ext_;
};

TEST_F(ScxKernelTest, NamesTheFirstMissingMap) {
  EXPECT_THAT(Refusal(), HasSubstr(dir_ + "/prefs is not pinned: "
                                   "`schedcache mirror --pin-dir " +
                                   dir_ + "` makes the maps"));
}

TEST_F(ScxKernelTest, NamesAMissingPinDirectory) {
  std::filesystem::remove(dir_);
  EXPECT_THAT(Refusal(),
              HasSubstr("pin directory " + dir_ + " does not exist"));
}

TEST_F(ScxKernelTest, NamesMetaOfAnotherAbi) {
  {
    absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
    ASSERT_TRUE(maps.ok()) << maps.status();
    ASSERT_TRUE(maps->WriteLlcs({{0}}).ok());
    ASSERT_TRUE(maps->WriteMeta({.policy = "visited-scan"}).ok());
  }
  const int meta = bpf_obj_get((dir_ + "/meta").c_str());
  ASSERT_GE(meta, 0) << std::strerror(errno);
  schedcache_meta value{};
  const uint32_t key = 0;
  ASSERT_EQ(bpf_map_lookup_elem(meta, &key, &value), 0);
  value.abi_version = SCHEDCACHE_MAP_ABI_VERSION + 1;
  ASSERT_EQ(bpf_map_update_elem(meta, &key, &value, BPF_ANY), 0);
  close(meta);
  EXPECT_THAT(Refusal(), HasSubstr(absl::StrCat(
                             dir_, "/meta: abi_version is ",
                             SCHEDCACHE_MAP_ABI_VERSION + 1,
                             ", this program's is ",
                             SCHEDCACHE_MAP_ABI_VERSION)));
}

TEST_F(ScxKernelTest, NamesMapsWithoutLlcs) {
  // Open pins the three maps with meta's nr_llcs 0, as a mirror that has
  // not yet written the topology leaves them.
  ASSERT_TRUE(PinnedMaps::Open(dir_).ok());
  EXPECT_THAT(Refusal(), HasSubstr(dir_ + "/meta: nr_llcs is 0"));
}

}  // namespace
}  // namespace schedcache
