// KernelDecisionSource's checks before loading, and its pure helpers. None
// needs a kernel with SCHED_CACHE: BTF files are written here by libbpf's
// BTF writer; the real kernel's run is in docs/LIVE.md.
#include "collector/kernel_decision_source.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "collector/kernel_decisions.h"

namespace schedcache::host {
namespace {

using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kernel_decision_source_test_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// WriteBtf writes a BTF blob holding `int` and one static function
// `function` (void-less, int returning: the checks look at names only).
std::string WriteBtf(const TempDir& dir, const char* function) {
  btf* types = btf__new_empty();
  const int int_id = btf__add_int(types, "int", 4, BTF_INT_SIGNED);
  const int proto = btf__add_func_proto(types, int_id);
  btf__add_func(types, function, BTF_FUNC_STATIC, proto);
  uint32_t size = 0;
  const void* raw = btf__raw_data(types, &size);
  const std::string path = dir.path() + "/vmlinux";
  std::ofstream(path, std::ios::binary)
      .write(static_cast<const char*>(raw), size);
  btf__free(types);
  return path;
}

TEST(CheckKernelDecisionSupport, NamesAMissingBtfFile) {
  TempDir dir;
  KernelSupportPaths paths;
  paths.btf = dir.path() + "/absent";
  const absl::Status status = CheckKernelDecisionSupport(paths);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "kernel decisions need the kernel's BTF, and '" + paths.btf +
                "' is absent (a kernel built without CONFIG_DEBUG_INFO_BTF)");
}

TEST(CheckKernelDecisionSupport, SaysSchedCacheIsMissingWhenBtfLacksTheWork) {
  TempDir dir;
  KernelSupportPaths paths;
  paths.btf = WriteBtf(dir, "task_numa_work");
  const absl::Status status = CheckKernelDecisionSupport(paths);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "the running kernel has no function task_cache_work in its BTF (" +
                paths.btf +
                "): it was built without CONFIG_SCHED_CACHE, so it makes no "
                "cache-aware decisions to record");
}

TEST(CheckKernelDecisionSupport, PassesBtfWithTheWorkThenWantsRoot) {
  TempDir dir;
  KernelSupportPaths paths;
  paths.btf = WriteBtf(dir, "task_cache_work");
  const absl::Status status = CheckKernelDecisionSupport(paths);
  if (geteuid() == 0) {
    EXPECT_TRUE(status.ok()) << status;
  } else {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr("need root"));
  }
}

// This machine's own kernel: where it has BTF but no SCHED_CACHE (Linux
// 6.18 of the development VM), Open refuses before loading, naming it.
TEST(KernelDecisionSourceOpen, RefusesThisKernelWithoutSchedCache) {
  btf* kernel = btf__load_vmlinux_btf();
  if (kernel == nullptr) GTEST_SKIP() << "this kernel exposes no BTF";
  const bool has_work = btf__find_by_name_kind(kernel, "task_cache_work",
                                               BTF_KIND_FUNC) > 0;
  btf__free(kernel);
  if (has_work) GTEST_SKIP() << "this kernel has SCHED_CACHE";
  const auto source = KernelDecisionSource::Open();
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(source.status().message(),
            "the running kernel has no function task_cache_work in its BTF "
            "(/sys/kernel/btf/vmlinux): it was built without "
            "CONFIG_SCHED_CACHE, so it makes no cache-aware decisions to "
            "record");
}

TEST(HashGroup, KeepsNoGroupAtZeroAndDependsOnTheKey) {
  EXPECT_EQ(HashGroup(0, 1234), 0u);
  const uint64_t address = 0xffff888012345600u;
  EXPECT_NE(HashGroup(address, 1), address);
  EXPECT_NE(HashGroup(address, 1), HashGroup(address, 2));
  EXPECT_EQ(HashGroup(address, 7), HashGroup(address, 7));
  // Neighbouring groups (64 bytes apart in one slab) do not stay close.
  const uint64_t a = HashGroup(address, 7);
  const uint64_t b = HashGroup(address + 64, 7);
  EXPECT_GT(__builtin_popcountll(a ^ b), 8);
}

schedcache_ktick_record BusyTick(uint32_t known) {
  schedcache_ktick_record r{};
  r.timestamp_ns = 5'000'000'042;
  r.jiffies = 4294893000;
  r.cpu = 3;
  r.tgid = 4240;
  r.tid = 4242;
  r.numa_preferred_nid = 1;
  r.footprint = 16095;
  r.known = known;
  return r;
}

TEST(TickOfRecord, TakesTheNumaAttributesTheRecordMarksKnown) {
  const KernelTick both = TickOfRecord(
      BusyTick(SCHEDCACHE_KTICK_NUMA_NID | SCHEDCACHE_KTICK_FOOTPRINT));
  EXPECT_EQ(both.timestamp_ns, 5'000'000'042);
  EXPECT_EQ(both.jiffies, 4294893000);
  EXPECT_EQ(both.cpu, 3);
  EXPECT_EQ(both.tgid, 4240);
  EXPECT_EQ(both.tid, 4242);
  EXPECT_EQ(both.numa_node, 1);
  EXPECT_EQ(both.footprint_pages, 16095);
  // A kernel whose BTF lacks numa_preferred_nid (no NUMA balancing), or a
  // thread without a group: the program leaves the bit clear, and the
  // value it wrote means nothing.
  const KernelTick no_node = TickOfRecord(BusyTick(SCHEDCACHE_KTICK_FOOTPRINT));
  EXPECT_EQ(no_node.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(no_node.footprint_pages, 16095);
  const KernelTick no_footprint =
      TickOfRecord(BusyTick(SCHEDCACHE_KTICK_NUMA_NID));
  EXPECT_EQ(no_footprint.numa_node, 1);
  EXPECT_EQ(no_footprint.footprint_pages, kUnchangedFootprint);
  const KernelTick neither = TickOfRecord(BusyTick(0));
  EXPECT_EQ(neither.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(neither.footprint_pages, kUnchangedFootprint);
}

TEST(TickOfRecord, NoPreferredNodeIsKnownAndImpossibleValuesAreNot) {
  schedcache_ktick_record r =
      BusyTick(SCHEDCACHE_KTICK_NUMA_NID | SCHEDCACHE_KTICK_FOOTPRINT);
  r.numa_preferred_nid = -1;  // NUMA_NO_NODE: known, no preferred node
  EXPECT_EQ(TickOfRecord(r).numa_node, -1);
  r.numa_preferred_nid = -2;  // no node the kernel names
  r.footprint = uint64_t{1} << 63;  // past int64
  EXPECT_EQ(TickOfRecord(r).numa_node, kUnchangedNumaNode);
  EXPECT_EQ(TickOfRecord(r).footprint_pages, kUnchangedFootprint);
}

TEST(NearestHz, RoundsToTheKernelsChoices) {
  // 250 Hz measured over 30 ms with one jiffy of error: 7 or 8 ticks in
  // 0.030 s = 233 or 267 Hz, both nearest 250.
  EXPECT_EQ(NearestHz(7 / 0.030), 250);
  EXPECT_EQ(NearestHz(8 / 0.030), 250);
  // 300 Hz: 9 ticks in 30 ms = 300; 1000 Hz: 31 in 30 ms = 1033.
  EXPECT_EQ(NearestHz(9 / 0.030), 300);
  EXPECT_EQ(NearestHz(31 / 0.030), 1000);
  EXPECT_EQ(NearestHz(3 / 0.030), 100);
  EXPECT_EQ(NearestHz(0), 100);
}

}  // namespace
}  // namespace schedcache::host
