// PreferenceMirror on the real kernel, fed by hand (no server): what prefs
// and meta hold after a snapshot, changes, duplicates, a resync of a new
// incarnation and a reopen. Skipped, saying what is missing, where the
// process may not mount a bpffs or call bpf().
#include "bpfmaps/preference_mirror.h"

#include <bpf/bpf.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "bpfmaps/pinned_maps.h"
#include "bpfmaps/schedcache_maps.h"
#include "bpfmaps/testing/private_bpffs_suite.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Two LLCs: 0 = CPUs {0, 1}, 1 = CPUs {2, 3}.
const LlcCpuLists kLlcs = {{0, 1}, {2, 3}};

constexpr char kSuiteName[] = "preference_mirror_test";

class PreferenceMirrorTest
    : public test_support::PrivateBpffsSuite<kSuiteName> {
 protected:
  void SetUp() override {
    SkipWithoutBpffs();
    if (IsSkipped()) return;
    dir_ = absl::StrCat(
        Root(), "/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0) << std::strerror(errno);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  PreferenceMirror OpenMirror() {
    absl::StatusOr<PreferenceMirror> mirror =
        PreferenceMirror::Open(dir_, kLlcs, "visited-scan");
    EXPECT_TRUE(mirror.ok()) << mirror.status();
    return std::move(*mirror);
  }

  // Pref reads tgid's prefs entry through the pinned file, as another
  // process would; nullopt when there is none.
  std::optional<schedcache_pref> Pref(uint32_t tgid) const {
    const MapFd prefs(bpf_obj_get((dir_ + "/prefs").c_str()));
    schedcache_pref value{};
    if (bpf_map_lookup_elem(prefs.get(), &tgid, &value) != 0) {
      return std::nullopt;
    }
    return value;
  }
  schedcache_meta Meta() const {
    const MapFd meta(bpf_obj_get((dir_ + "/meta").c_str()));
    schedcache_meta value{};
    const uint32_t key = 0;
    EXPECT_EQ(bpf_map_lookup_elem(meta.get(), &key, &value), 0);
    return value;
  }
  std::vector<uint32_t> Tgids() const {
    absl::StatusOr<PinnedMaps> maps = PinnedMaps::Open(dir_);
    EXPECT_TRUE(maps.ok()) << maps.status();
    absl::StatusOr<std::vector<uint32_t>> tgids = maps->PrefTgids();
    EXPECT_TRUE(tgids.ok()) << tgids.status();
    return *tgids;
  }

  // ApplyFirstSnapshot: tgid 100 → LLC 0 CPU 1; 200 → none; 300 → LLC 1
  // without a CPU; consistent at sequence 10 of incarnation 7.
  static void ApplyFirstSnapshot(PreferenceMirror& mirror) {
    mirror.OnSnapshotEntry({.tgid = 100, .llc = 0, .cpu = 1});
    mirror.OnSnapshotEntry({.tgid = 200, .llc = -1});
    mirror.OnSnapshotEntry({.tgid = 300, .llc = 1});
    ASSERT_TRUE(mirror.OnSnapshotEnd({.incarnation = 7, .sequence = 10}).ok());
  }

  std::string dir_;
};

TEST_F(PreferenceMirrorTest, OpenWritesLlcsAndMetaBeforeAnySnapshot) {
  PreferenceMirror mirror = OpenMirror();
  EXPECT_FALSE(mirror.reused());
  const schedcache_meta meta = Meta();
  EXPECT_EQ(meta.abi_version, 1u);
  EXPECT_EQ(meta.nr_llcs, 2u);
  EXPECT_EQ(meta.incarnation, 0u);  // no snapshot yet
  EXPECT_EQ(meta.last_seq, 0u);
  EXPECT_STREQ(meta.policy, "visited-scan");
  EXPECT_TRUE(Tgids().empty());
}

TEST_F(PreferenceMirrorTest, SnapshotStoresOnlyProcessesWithAPreference) {
  PreferenceMirror mirror = OpenMirror();
  ApplyFirstSnapshot(mirror);
  EXPECT_THAT(Tgids(), UnorderedElementsAre(100u, 300u));
  const std::optional<schedcache_pref> first = Pref(100);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->llc, 0);
  EXPECT_EQ(first->cpu, 1);
  EXPECT_EQ(first->seq, 10u);  // the snapshot's sequence
  // 300 came without a CPU: LLC 1's first CPU, 2.
  const std::optional<schedcache_pref> third = Pref(300);
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->llc, 1);
  EXPECT_EQ(third->cpu, 2);
  EXPECT_EQ(third->llc_first_cpu, 2);
  const schedcache_meta meta = Meta();
  EXPECT_EQ(meta.incarnation, 7u);
  EXPECT_EQ(meta.last_seq, 10u);
  EXPECT_EQ(mirror.counters().snapshots, 1u);
  EXPECT_EQ(mirror.counters().resyncs, 0u);
  EXPECT_EQ(mirror.counters().snapshot_size, 2u);
}

TEST_F(PreferenceMirrorTest, ChangesUpsertDeleteAndSkipDuplicates) {
  PreferenceMirror mirror = OpenMirror();
  ApplyFirstSnapshot(mirror);
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 100, .llc = 1, .cpu = 3,
                             .incarnation = 7, .sequence = 11})
                  .ok());
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 300, .llc = -1,
                             .reason = SCHEDCACHE_REASON_EXITED,
                             .incarnation = 7, .sequence = 12})
                  .ok());
  // Sequence 11 again (a replay after a reconnect): skipped.
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 100, .llc = 0, .cpu = 0,
                             .incarnation = 7, .sequence = 11})
                  .ok());
  EXPECT_THAT(Tgids(), UnorderedElementsAre(100u));
  const std::optional<schedcache_pref> moved = Pref(100);
  ASSERT_TRUE(moved.has_value());
  EXPECT_EQ(moved->llc, 1);
  EXPECT_EQ(moved->cpu, 3);
  EXPECT_EQ(moved->seq, 11u);
  EXPECT_EQ(Meta().last_seq, 12u);
  EXPECT_EQ(mirror.counters().changes_applied, 2u);
  EXPECT_EQ(mirror.counters().changes_duplicate, 1u);
  EXPECT_EQ(mirror.counters().deletes_exited, 1u);
  EXPECT_EQ(mirror.counters().map_full_evictions, 0u);
}

TEST_F(PreferenceMirrorTest, ChangeOfAnotherIncarnationChangesNothing) {
  PreferenceMirror mirror = OpenMirror();
  ApplyFirstSnapshot(mirror);
  const absl::Status status = mirror.OnChange(
      {.tgid = 100, .llc = 1, .cpu = 2, .incarnation = 8, .sequence = 1});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("change of tgid 100 at sequence 1 is of incarnation "
                        "8, the maps hold incarnation 7"));
  EXPECT_EQ(Pref(100)->llc, 0);
  EXPECT_EQ(Meta().incarnation, 7u);
}

TEST_F(PreferenceMirrorTest, ResyncToANewIncarnationDeletesWhatIsGone) {
  PreferenceMirror mirror = OpenMirror();
  ApplyFirstSnapshot(mirror);
  // The server restarted: only 300 is back, now in LLC 0, and a new
  // process 400; sequences start again.
  mirror.OnSnapshotEntry({.tgid = 300, .llc = 0, .cpu = 0});
  mirror.OnSnapshotEntry({.tgid = 400, .llc = 1, .cpu = 3});
  ASSERT_TRUE(mirror.OnSnapshotEnd({.incarnation = 9, .sequence = 2}).ok());
  EXPECT_THAT(Tgids(), UnorderedElementsAre(300u, 400u));
  EXPECT_EQ(Pref(300)->llc, 0);
  EXPECT_EQ(Meta().incarnation, 9u);
  EXPECT_EQ(Meta().last_seq, 2u);
  EXPECT_EQ(mirror.counters().resyncs, 1u);
  EXPECT_EQ(mirror.counters().stale_deleted, 1u);  // 100
  // Sequence 3 of the new incarnation applies although 3 < 10.
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 400, .llc = -1, .incarnation = 9,
                             .sequence = 3})
                  .ok());
  EXPECT_THAT(Tgids(), UnorderedElementsAre(300u));
}

TEST_F(PreferenceMirrorTest, ReopenKeepsEntriesUntilTheFirstSnapshot) {
  {
    PreferenceMirror first = OpenMirror();
    ApplyFirstSnapshot(first);
  }
  PreferenceMirror second = OpenMirror();
  EXPECT_TRUE(second.reused());
  // A scheduler keeps its hints while the new writer waits for a snapshot.
  EXPECT_THAT(Tgids(), UnorderedElementsAre(100u, 300u));
  EXPECT_EQ(Meta().incarnation, 0u);
  second.OnSnapshotEntry({.tgid = 100, .llc = 0, .cpu = 1});
  ASSERT_TRUE(second.OnSnapshotEnd({.incarnation = 7, .sequence = 15}).ok());
  EXPECT_THAT(Tgids(), UnorderedElementsAre(100u));
  EXPECT_EQ(second.counters().stale_deleted, 1u);  // 300, left by the first
}

TEST_F(PreferenceMirrorTest, BadSnapshotEntryIsRefusedAloneAndNamed) {
  PreferenceMirror mirror = OpenMirror();
  mirror.OnSnapshotEntry({.tgid = 100, .llc = 5, .cpu = 0});
  mirror.OnSnapshotEntry({.tgid = 200, .llc = 1, .cpu = 0});  // CPU 0: LLC 0
  mirror.OnSnapshotEntry({.tgid = 300, .llc = 1, .cpu = 3});
  const absl::Status status =
      mirror.OnSnapshotEnd({.incarnation = 7, .sequence = 4});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("2 entries not written"));
  EXPECT_THAT(status.message(),
              HasSubstr("tgid 100: preference llc 5 is not one of the 2 LLCs"));
  EXPECT_THAT(status.message(),
              HasSubstr("tgid 200: preference cpu 0 is not a CPU of llc 1"));
  EXPECT_THAT(Tgids(), UnorderedElementsAre(300u));
  EXPECT_EQ(Meta().last_seq, 4u);
  EXPECT_EQ(mirror.counters().snapshot_size, 1u);
}

TEST_F(PreferenceMirrorTest, AnEntryGoneBeforeItsDeleteCountsAsEvicted) {
  PreferenceMirror mirror = OpenMirror();
  ApplyFirstSnapshot(mirror);
  // What the LRU hash does when full: drop an entry behind the writer.
  {
    const MapFd prefs(bpf_obj_get((dir_ + "/prefs").c_str()));
    const uint32_t tgid = 100;
    ASSERT_EQ(bpf_map_delete_elem(prefs.get(), &tgid), 0);
  }
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 100, .llc = -1,
                             .reason = SCHEDCACHE_REASON_EVICTED,
                             .incarnation = 7, .sequence = 11})
                  .ok());
  EXPECT_EQ(mirror.counters().map_full_evictions, 1u);
  EXPECT_EQ(mirror.counters().deletes_evicted, 1u);
  // A process that never had an entry is no eviction.
  ASSERT_TRUE(mirror
                  .OnChange({.tgid = 200, .llc = -1,
                             .reason = SCHEDCACHE_REASON_EXITED,
                             .incarnation = 7, .sequence = 12})
                  .ok());
  EXPECT_EQ(mirror.counters().map_full_evictions, 1u);
}

TEST_F(PreferenceMirrorTest, MakePinDirectoryMakesDirectoriesInsideABpffsOnly) {
  const std::string nested = dir_ + "/a/b";
  ASSERT_TRUE(MakePinDirectory(nested).ok());
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_TRUE(MakePinDirectory(nested).ok());  // exists: fine
  // /tmp is a tmpfs or a disk here, never a bpffs; nothing is made there.
  const std::string outside = "/tmp/preference_mirror_test_no_bpffs/pins";
  const absl::Status refused = MakePinDirectory(outside);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(),
              HasSubstr("pin directory " + outside +
                        " does not exist, and /tmp is not on a bpffs"));
  EXPECT_FALSE(std::filesystem::exists(outside));
}

}  // namespace
}  // namespace schedcache
