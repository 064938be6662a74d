// PinnedMaps on the real kernel: a bpffs mounted in a private mount
// namespace, the maps read back from a separate process and from BPF (the
// pref_probe program, run through BPF_PROG_TEST_RUN), reuse on reopen, and
// the refusal of maps of another layout or ABI. Skipped, saying what is
// missing, where the process may not mount a bpffs or call bpf().
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "bpfmaps/pinned_maps.h"
#include "bpfmaps/schedcache_maps.h"
#include "bpfmaps/testing/pref_probe.h"
#include "bpfmaps/testing/pref_probe_runner.h"
#include "bpfmaps/testing/private_bpffs.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class PinnedMapsKernelTest : public ::testing::Test {
 protected:
  // The suite's bpffs, and why there is none; set up once per process,
  // since a process enters its own mount namespace once.
  struct SuiteBpffs {
    std::string root;
    std::string skip_reason;
    bool keep = false;  // leave the maps for inspection
  };
  static SuiteBpffs& Suite() {
    static SuiteBpffs* const suite = new SuiteBpffs;
    return *suite;
  }
  // SCHEDCACHE_TEST_KEEP_MAPS_IN=DIR (a mounted bpffs) runs the tests
  // there instead and leaves each test's maps in DIR/<test name> for
  // inspection (docs/INTEGRATION.md shows them with bpftool).
  static void SetUpTestSuite() {
    if (const char* keep = std::getenv("SCHEDCACHE_TEST_KEEP_MAPS_IN")) {
      Suite().keep = true;
      Suite().root = keep;
      Suite().skip_reason = std::string(CheckBpffs(keep).message());
      return;
    }
    absl::StatusOr<std::string> root =
        test_support::MountPrivateBpffs("pinned_maps_kernel_test");
    if (root.ok()) {
      Suite().root = *root;
    } else {
      Suite().skip_reason = std::string(root.status().message());
    }
  }
  static void TearDownTestSuite() {
    if (Suite().root.empty() || Suite().keep) return;
    test_support::UnmountPrivateBpffs(Suite().root);
  }

  void SetUp() override {
    if (!Suite().skip_reason.empty()) GTEST_SKIP() << Suite().skip_reason;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = absl::StrCat(Suite().root, "/", info->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0)
        << dir_ << ": " << std::strerror(errno);
  }
  void TearDown() override {
    if (!dir_.empty() && !Suite().keep) std::filesystem::remove_all(dir_);
  }

  std::string Path(const char* map) const { return dir_ + "/" + map; }

  // WriteTwoProcesses writes LLCs {0, 1} and {2, 3}, meta, and two prefs:
  // tgid 100 → llc 0 cpu 1, tgid 200 → llc 1 cpu 3.
  static void WriteTwoProcesses(PinnedMaps& maps) {
    ASSERT_TRUE(maps.WriteLlcs({{0, 1}, {2, 3}}).ok());
    ASSERT_TRUE(maps.WriteMeta({.incarnation = 77,
                                .last_seq = 5,
                                .updated_ns = 1234,
                                .policy = "visited-scan"})
                    .ok());
    ASSERT_TRUE(
        maps.UpsertPref(100, {.llc = 0, .cpu = 1, .seq = 4, .updated_ns = 1000})
            .ok());
    ASSERT_TRUE(
        maps.UpsertPref(200, {.llc = 1, .cpu = 3, .seq = 5, .updated_ns = 1200})
            .ok());
  }

  // LoadProbe loads pref_probe.bpf.o with its maps replaced by the pinned
  // ones, as a scheduler would reuse them.
  std::optional<test_support::PrefProbeRunner> LoadProbe() const {
    absl::StatusOr<test_support::PrefProbeRunner> probe =
        test_support::PrefProbeRunner::Load(SCHEDCACHE_PREF_PROBE_OBJECT, dir_);
    if (!probe.ok()) {
      ADD_FAILURE() << probe.status();
      return std::nullopt;
    }
    return std::move(*probe);
  }

  // RunProbe asks the probe about `tgid`.
  static pref_probe_ctx RunProbe(
      const std::optional<test_support::PrefProbeRunner>& probe,
      uint32_t tgid) {
    absl::StatusOr<pref_probe_ctx> ctx = probe->Run(tgid);
    EXPECT_TRUE(ctx.ok()) << ctx.status();
    return ctx.ok() ? *ctx : pref_probe_ctx{};
  }

  std::string dir_;  // this test's directory on the bpffs
};

// What a separate process read from the pinned maps.
struct ReaderView {
  schedcache_pref pref_100;
  schedcache_pref pref_200;
  schedcache_llc llc_0;
  schedcache_llc llc_1;
  schedcache_meta meta;
};

// ReadInChild forks a process that opens the pinned files itself and
// sends back what it found; the exit code names the step that failed.
int ReadInChild(const std::string& dir, ReaderView& view) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    ReaderView found{};
    const MapFd prefs(bpf_obj_get((dir + "/prefs").c_str()));
    const MapFd llcs(bpf_obj_get((dir + "/llcs").c_str()));
    const MapFd meta(bpf_obj_get((dir + "/meta").c_str()));
    if (prefs.get() < 0 || llcs.get() < 0 || meta.get() < 0) _exit(10);
    const uint32_t keys[] = {100, 200, 0, 1};
    if (bpf_map_lookup_elem(prefs.get(), &keys[0], &found.pref_100) != 0 ||
        bpf_map_lookup_elem(prefs.get(), &keys[1], &found.pref_200) != 0) {
      _exit(11);
    }
    if (bpf_map_lookup_elem(llcs.get(), &keys[2], &found.llc_0) != 0 ||
        bpf_map_lookup_elem(llcs.get(), &keys[3], &found.llc_1) != 0 ||
        bpf_map_lookup_elem(meta.get(), &keys[2], &found.meta) != 0) {
      _exit(12);
    }
    const bool sent =
        write(pipe_fds[1], &found, sizeof(found)) == sizeof(found);
    _exit(sent ? 0 : 13);
  }
  close(pipe_fds[1]);
  const ssize_t got = read(pipe_fds[0], &view, sizeof(view));
  close(pipe_fds[0]);
  int wait_status = 0;
  if (pid < 0 || waitpid(pid, &wait_status, 0) != pid) return -1;
  if (!WIFEXITED(wait_status)) return -1;
  if (WEXITSTATUS(wait_status) == 0 && got != sizeof(view)) return 14;
  return WEXITSTATUS(wait_status);
}

// MapId returns the kernel's id of the map pinned at `path`, 0 on error.
uint32_t MapId(const std::string& path) {
  const MapFd fd(bpf_obj_get(path.c_str()));
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (fd.get() < 0 || bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0)
    return 0;
  return info.id;
}

TEST_F(PinnedMapsKernelTest, CreatesTheSetAndASeparateProcessReadsIt) {
  absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
  ASSERT_TRUE(maps.ok()) << maps.status();
  EXPECT_FALSE(maps->reused());
  WriteTwoProcesses(*maps);
  for (const char* name : {"prefs", "llcs", "meta"}) {
    struct stat st {};
    ASSERT_EQ(stat(Path(name).c_str(), &st), 0) << Path(name);
    EXPECT_EQ(st.st_mode & 07777, 0600u) << Path(name);
  }

  ReaderView view{};
  ASSERT_EQ(ReadInChild(dir_, view), 0);
  // Written above: tgid 100 → llc 0 (CPUs 0-1) cpu 1, seq 4;
  // tgid 200 → llc 1 (CPUs 2-3, first 2) cpu 3, seq 5.
  EXPECT_EQ(view.pref_100.llc, 0);
  EXPECT_EQ(view.pref_100.cpu, 1);
  EXPECT_EQ(view.pref_100.llc_first_cpu, 0);
  EXPECT_EQ(view.pref_100.reason, SCHEDCACHE_REASON_NONE);
  EXPECT_EQ(view.pref_100.seq, 4u);
  EXPECT_EQ(view.pref_100.updated_ns, 1000u);
  EXPECT_EQ(view.pref_200.llc, 1);
  EXPECT_EQ(view.pref_200.cpu, 3);
  EXPECT_EQ(view.pref_200.llc_first_cpu, 2);
  EXPECT_EQ(view.pref_200.seq, 5u);
  // Masks: CPUs 0,1 → 0b0011; CPUs 2,3 → 0b1100.
  EXPECT_EQ(view.llc_0.first_cpu, 0u);
  EXPECT_EQ(view.llc_0.nr_cpus, 2u);
  EXPECT_EQ(view.llc_0.cpus[0], 0x3u);
  EXPECT_EQ(view.llc_1.first_cpu, 2u);
  EXPECT_EQ(view.llc_1.nr_cpus, 2u);
  EXPECT_EQ(view.llc_1.cpus[0], 0xcu);
  EXPECT_EQ(view.meta.abi_version, 1u);
  EXPECT_EQ(view.meta.nr_llcs, 2u);
  EXPECT_EQ(view.meta.incarnation, 77u);
  EXPECT_EQ(view.meta.last_seq, 5u);
  EXPECT_EQ(view.meta.updated_ns, 1234u);
  EXPECT_STREQ(view.meta.policy, "visited-scan");
}

TEST_F(PinnedMapsKernelTest, PinModeIsConfigurable) {
  ASSERT_TRUE(PinnedMaps::Open(dir_, {.pin_mode = 0640}).ok());
  struct stat st {};
  ASSERT_EQ(stat(Path("meta").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(PinnedMapsKernelTest, ProbeSeesEachProcessLlcAndNoneOnceDeleted) {
  absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
  ASSERT_TRUE(maps.ok()) << maps.status();
  WriteTwoProcesses(*maps);
  const std::optional<test_support::PrefProbeRunner> probe = LoadProbe();
  ASSERT_TRUE(probe);

  const pref_probe_ctx first = RunProbe(probe, 100);
  EXPECT_EQ(first.llc, 0);
  EXPECT_EQ(first.cpu, 1);
  EXPECT_EQ(first.in_mask, 1u);
  const pref_probe_ctx second = RunProbe(probe, 200);
  EXPECT_EQ(second.llc, 1);
  EXPECT_EQ(second.cpu, 3);
  EXPECT_EQ(second.in_mask, 1u);
  const pref_probe_ctx unknown = RunProbe(probe, 300);
  EXPECT_EQ(unknown.llc, -1);
  EXPECT_EQ(unknown.cpu, -1);
  EXPECT_EQ(unknown.in_mask, 0u);

  ASSERT_TRUE(maps->DeletePref(100).ok());
  const pref_probe_ctx deleted = RunProbe(probe, 100);
  EXPECT_EQ(deleted.llc, -1);
  EXPECT_EQ(deleted.cpu, -1);
  EXPECT_EQ(RunProbe(probe, 200).llc, 1);
  // Deleting it again finds nothing, which is not an error.
  ASSERT_TRUE(maps->DeletePref(100).ok());
  EXPECT_EQ(maps->counters().upserts, 2u);
  EXPECT_EQ(maps->counters().deletes, 1u);
  EXPECT_EQ(maps->counters().deletes_absent, 1u);
  EXPECT_EQ(maps->counters().failed_writes, 0u);
}

TEST_F(PinnedMapsKernelTest, BpfClockNowNsIsTheClockBpfProgramsRead) {
  ASSERT_TRUE(PinnedMaps::Open(dir_).ok());
  const std::optional<test_support::PrefProbeRunner> probe = LoadProbe();
  ASSERT_TRUE(probe);
  const uint64_t before = BpfClockNowNs();
  const pref_probe_ctx run = RunProbe(probe, 1);
  const uint64_t after = BpfClockNowNs();
  EXPECT_LE(before, run.now_ns);
  EXPECT_LE(run.now_ns, after);
}

TEST_F(PinnedMapsKernelTest, ReopenReusesTheMapsAndTheirEntries) {
  uint32_t ids_before[3];
  {
    absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
    ASSERT_TRUE(maps.ok()) << maps.status();
    WriteTwoProcesses(*maps);
  }
  const char* names[] = {"prefs", "llcs", "meta"};
  for (int i = 0; i < 3; ++i) ids_before[i] = MapId(Path(names[i]));
  // A scheduler holding prefs across the writer's restart.
  const std::optional<test_support::PrefProbeRunner> probe = LoadProbe();
  ASSERT_TRUE(probe);

  absl::StatusOr<PinnedMaps> reopened = PinnedMaps::Open(dir_);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_TRUE(reopened->reused());
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(ids_before[i], 0u);
    EXPECT_EQ(MapId(Path(names[i])), ids_before[i]) << names[i];
  }
  const absl::StatusOr<std::vector<uint32_t>> tgids = reopened->PrefTgids();
  ASSERT_TRUE(tgids.ok()) << tgids.status();
  EXPECT_THAT(*tgids, UnorderedElementsAre(100u, 200u));
  // meta keeps the LLC count until the LLCs are written again.
  ASSERT_TRUE(
      reopened->WriteMeta({.incarnation = 78, .policy = "full-scan"}).ok());
  ReaderView view{};
  ASSERT_EQ(ReadInChild(dir_, view), 0);
  EXPECT_EQ(view.meta.nr_llcs, 2u);
  EXPECT_EQ(view.meta.incarnation, 78u);
  // The new writer's changes reach the program that held the old maps.
  ASSERT_TRUE(reopened->WriteLlcs({{0, 1}, {2, 3}}).ok());
  ASSERT_TRUE(reopened->UpsertPref(100, {.llc = 1, .cpu = 2}).ok());
  const pref_probe_ctx moved = RunProbe(probe, 100);
  EXPECT_EQ(moved.llc, 1);
  EXPECT_EQ(moved.cpu, 2);
}

TEST_F(PinnedMapsKernelTest,
       RefusesAPinnedMapOfAnotherValueSizeAndCreatesNothing) {
  // An LRU hash keyed like prefs, with 40-byte values instead of 32.
  const MapFd other(
      bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "prefs", 4, 40, 8, nullptr));
  ASSERT_GE(other.get(), 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(other.get(), Path("prefs").c_str()), 0);

  const absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
  EXPECT_EQ(maps.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(maps.status().message(),
              HasSubstr(Path("prefs") + ": value_size is 40, map ABI 1 "
                                        "expects 32 (struct schedcache_pref)"));
  EXPECT_FALSE(std::filesystem::exists(Path("llcs")));
  EXPECT_FALSE(std::filesystem::exists(Path("meta")));
}

TEST_F(PinnedMapsKernelTest, RefusesAPinnedMapOfAnotherType) {
  // A plain hash where prefs must be an LRU hash; sizes as prefs'.
  const MapFd other(bpf_map_create(BPF_MAP_TYPE_HASH, "prefs", 4,
                                   sizeof(schedcache_pref), 8, nullptr));
  ASSERT_GE(other.get(), 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(other.get(), Path("prefs").c_str()), 0);

  const absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
  EXPECT_EQ(maps.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(maps.status().message(),
              HasSubstr(Path("prefs") +
                        ": map type is hash, map ABI 1 expects lru_hash"));
}

TEST_F(PinnedMapsKernelTest, RefusesMetaOfAnotherAbi) {
  ASSERT_TRUE(PinnedMaps::Open(dir_).ok());
  {
    const MapFd meta(bpf_obj_get(Path("meta").c_str()));
    schedcache_meta value{};
    value.abi_version = 2;
    const uint32_t key = 0;
    ASSERT_EQ(bpf_map_update_elem(meta.get(), &key, &value, BPF_ANY), 0);
  }
  const absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
  EXPECT_EQ(maps.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      maps.status().message(),
      HasSubstr(Path("meta") + ": abi_version is 2, this program's is 1"));
}

TEST_F(PinnedMapsKernelTest, RefusesBadWritesAndCountsThem) {
  absl::StatusOr<PinnedMaps> maps =
      PinnedMaps::Open(dir_, {.llcs_capacity = 2});
  ASSERT_TRUE(maps.ok()) << maps.status();
  const absl::Status early = maps->UpsertPref(1, {.llc = 0, .cpu = 0});
  EXPECT_EQ(early.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(early.message(), HasSubstr("no LLCs written yet"));

  const absl::Status too_many = maps->WriteLlcs({{0}, {1}, {2}});
  EXPECT_EQ(too_many.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(too_many.message(),
              HasSubstr(Path("llcs") + " holds 2 LLCs, the topology has 3"));

  ASSERT_TRUE(maps->WriteLlcs({{0}, {1}}).ok());
  const absl::Status bad = maps->UpsertPref(7, {.llc = 0, .cpu = 1});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("tgid 7: preference cpu 1 is not a CPU "
                                       "of llc 0"));
  // The bad row is refused alone: the next one is stored.
  EXPECT_TRUE(maps->UpsertPref(8, {.llc = 1, .cpu = 1}).ok());
  EXPECT_EQ(maps->counters().failed_writes, 2u);
  EXPECT_EQ(maps->counters().upserts, 1u);
  const absl::StatusOr<std::vector<uint32_t>> tgids = maps->PrefTgids();
  ASSERT_TRUE(tgids.ok());
  EXPECT_THAT(*tgids, UnorderedElementsAre(8u));
}

}  // namespace
}  // namespace schedcache
