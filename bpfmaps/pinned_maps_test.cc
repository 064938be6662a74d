// PinnedMaps' input checks and error messages: none of these needs a bpffs
// or bpf(), so they run everywhere (the real kernel is in
// pinned_maps_kernel_test.cc).
#include "bpfmaps/pinned_maps.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// A fresh directory under /tmp, which is not a bpffs.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/pinned_maps_test_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CheckBpffs, NamesTheDirectoryAndTheMountCommandWhenNotOnABpffs) {
  TempDir dir;
  const absl::Status status = CheckBpffs(dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(dir.path() + " is not on a bpffs"));
  EXPECT_THAT(status.message(), HasSubstr("mount -t bpf bpf " + dir.path()));
}

TEST(CheckBpffs, NamesAMissingDirectory) {
  TempDir dir;
  const std::string missing = dir.path() + "/absent";
  const absl::Status status = CheckBpffs(missing);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("pin directory " + missing));
  EXPECT_THAT(status.message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(status.message(), HasSubstr("mount -t bpf bpf " + missing));
}

TEST(PinnedMapsOpen, RefusesADirectoryNotOnABpffsAndCreatesNothing) {
  TempDir dir;
  const absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir.path());
  ASSERT_FALSE(maps.ok());
  EXPECT_THAT(maps.status().message(), HasSubstr("is not on a bpffs"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(PinnedMapsOpen, RefusesAZeroCapacityOrAModeBeyondPermissionBits) {
  TempDir dir;
  const auto no_prefs = PinnedMaps::Open(dir.path(), {.prefs_capacity = 0});
  EXPECT_EQ(no_prefs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_prefs.status().message(),
              HasSubstr("map capacities must be at least 1: prefs_capacity 0, "
                        "llcs_capacity 1024"));
  const auto bad_mode = PinnedMaps::Open(dir.path(), {.pin_mode = 010600});
  EXPECT_EQ(bad_mode.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_mode.status().message(),
              HasSubstr("pin_mode 10600 is not a file mode"));
}

TEST(EncodeLlcs, SetsMaskBitsFirstCpuAndCount) {
  // llc 0 = {5, 4, 65}: bits 4 and 5 of word 0 (0x30), bit 1 of word 1
  // (65 = 64 + 1 → 0x2); the first CPU is the lowest, 4, not the first
  // listed. llc 1 = {0}: word 0 = 0x1.
  const absl::StatusOr<std::vector<schedcache_llc>> llcs =
      EncodeLlcs({{5, 4, 65}, {0}});
  ASSERT_TRUE(llcs.ok()) << llcs.status();
  ASSERT_EQ(llcs->size(), 2u);
  EXPECT_EQ((*llcs)[0].first_cpu, 4u);
  EXPECT_EQ((*llcs)[0].nr_cpus, 3u);
  EXPECT_EQ((*llcs)[0].cpus[0], 0x30u);
  EXPECT_EQ((*llcs)[0].cpus[1], 0x2u);
  EXPECT_EQ((*llcs)[0].cpus[2], 0u);
  EXPECT_EQ((*llcs)[1].first_cpu, 0u);
  EXPECT_EQ((*llcs)[1].nr_cpus, 1u);
  EXPECT_EQ((*llcs)[1].cpus[0], 0x1u);
}

TEST(EncodeLlcs, TheLastCpuTheMapsHoldFits) {
  // CPU 16383 is bit 63 of word 255.
  const absl::StatusOr<std::vector<schedcache_llc>> llcs =
      EncodeLlcs({{SCHEDCACHE_MAX_CPUS - 1}});
  ASSERT_TRUE(llcs.ok()) << llcs.status();
  EXPECT_EQ((*llcs)[0].cpus[SCHEDCACHE_CPU_MASK_WORDS - 1], uint64_t{1} << 63);
}

TEST(EncodeLlcs, RefusesAnLlcWithoutCpus) {
  const auto llcs = EncodeLlcs({{0}, {}});
  EXPECT_EQ(llcs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(llcs.status().message(), HasSubstr("llc 1 has no CPUs"));
}

TEST(EncodeLlcs, RefusesACpuBeyondTheMaskNamingIt) {
  const auto llcs = EncodeLlcs({{0}, {1, 16384}});
  EXPECT_EQ(llcs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(llcs.status().message(),
              HasSubstr("llc 1: cpu 16384 is beyond the maps' "
                        "SCHEDCACHE_MAX_CPUS (16384)"));
}

TEST(EncodeLlcs, RefusesACpuInTwoLlcs) {
  const auto llcs = EncodeLlcs({{0, 1}, {2, 1}});
  EXPECT_EQ(llcs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(llcs.status().message(),
              HasSubstr("llc 1: cpu 1 is already in llc 0"));
}

TEST(EncodeMeta, StoresTheFieldsAndTheAbiVersion) {
  const auto meta = EncodeMeta(3, {.incarnation = 9,
                                   .last_seq = 41,
                                   .updated_ns = 123,
                                   .policy = "full-scan"});
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->abi_version, 1u);
  EXPECT_EQ(meta->nr_llcs, 3u);
  EXPECT_EQ(meta->incarnation, 9u);
  EXPECT_EQ(meta->last_seq, 41u);
  EXPECT_EQ(meta->updated_ns, 123u);
  EXPECT_STREQ(meta->policy, "full-scan");
}

TEST(EncodeMeta, APolicyNameOf63BytesFitsAnd64DoNot) {
  EXPECT_TRUE(EncodeMeta(1, {.policy = std::string(63, 'p')}).ok());
  const auto meta = EncodeMeta(1, {.policy = std::string(64, 'p')});
  EXPECT_EQ(meta.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(meta.status().message(),
              HasSubstr("is 64 bytes; meta holds at most 63"));
}

TEST(EncodePref, FillsTheLlcsFirstCpuAndNoReason) {
  const auto llcs = EncodeLlcs({{0, 1}, {7, 6}});
  ASSERT_TRUE(llcs.ok());
  const auto pref =
      EncodePref(*llcs, {.llc = 1, .cpu = 7, .seq = 12, .updated_ns = 99});
  ASSERT_TRUE(pref.ok()) << pref.status();
  EXPECT_EQ(pref->llc, 1);
  EXPECT_EQ(pref->cpu, 7);
  EXPECT_EQ(pref->llc_first_cpu, 6);
  EXPECT_EQ(pref->reason, SCHEDCACHE_REASON_NONE);
  EXPECT_EQ(pref->seq, 12u);
  EXPECT_EQ(pref->updated_ns, 99u);
}

TEST(EncodePref, RefusesAnLlcNotWrittenAndACpuOutsideTheLlc) {
  const auto llcs = EncodeLlcs({{0, 1}, {2, 3}});
  ASSERT_TRUE(llcs.ok());
  const auto no_llc = EncodePref(*llcs, {.llc = 2, .cpu = 2});
  EXPECT_EQ(no_llc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_llc.status().message(),
              HasSubstr("preference llc 2 is not one of the 2 LLCs written"));
  const auto wrong_cpu = EncodePref(*llcs, {.llc = 1, .cpu = 1});
  EXPECT_EQ(wrong_cpu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_cpu.status().message(),
              HasSubstr("preference cpu 1 is not a CPU of llc 1 (first cpu 2, "
                        "2 cpus)"));
  EXPECT_FALSE(EncodePref(*llcs, {.llc = -1, .cpu = 0}).ok());
  EXPECT_FALSE(EncodePref(*llcs, {.llc = 0, .cpu = -1}).ok());
}

TEST(BpfError, EpermSaysBpfWasRefusedAndWhy) {
  const absl::Status status = BpfError(EPERM, "BPF_MAP_CREATE", "/x/prefs");
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(),
              HasSubstr("bpf(BPF_MAP_CREATE) on /x/prefs: bpf() was refused "
                        "(EPERM): "));
  // Root here has the capabilities, so the cause named is seccomp or an
  // LSM; anyone else lacks them and is told about the sysctl as well.
  EXPECT_THAT(
      status.message(),
      HasSubstr(geteuid() == 0 ? "seccomp" : "unprivileged_bpf_disabled"));
}

TEST(BpfError, EnosysSaysTheKernelHasNoBpf) {
  const absl::Status status = BpfError(ENOSYS, "BPF_OBJ_GET", "");
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(),
              HasSubstr("bpf(BPF_OBJ_GET): this kernel has no "
                        "bpf() (ENOSYS)"));
}

TEST(BpfError, OtherErrorsKeepTheirCodeCallAndPath) {
  const absl::Status status = BpfError(EEXIST, "BPF_OBJ_PIN", "/x/meta");
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("bpf(BPF_OBJ_PIN) on /x/meta"));
}

}  // namespace
}  // namespace schedcache
