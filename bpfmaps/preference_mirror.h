// PreferenceMirror keeps the pinned maps of docs/INTEGRATION.md (bpfmaps/
// pinned_maps.h) equal to one policy's preferences in one server session,
// as a WatchPreferences stream reports them: `llcs` and `meta` first, then
// a snapshot, then each change.
//
// It knows nothing of gRPC: a driver (`schedcache mirror`, or a test)
// feeds it three kinds of update, in stream order:
//   OnSnapshotEntry  one process's preference in a snapshot (buffered);
//   OnSnapshotEnd    the marker: the snapshot is consistent at a sequence
//                    of an incarnation; prefs is rewritten to hold exactly
//                    the snapshot's processes that have a preference;
//   OnChange         one later change; a change to "none" (any reason,
//                    exited and evicted included) deletes the entry.
// A process with no preference has no prefs entry. meta holds the
// incarnation and the last applied sequence; incarnation 0 means no
// snapshot has been applied since this writer opened the maps.
//
// Thread contract: thread-compatible (one writer).
#ifndef SCHEDCACHE_BPFMAPS_PREFERENCE_MIRROR_H_
#define SCHEDCACHE_BPFMAPS_PREFERENCE_MIRROR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bpfmaps/pinned_maps.h"

namespace schedcache {

// MirroredPreference is one process's preference in a snapshot.
struct MirroredPreference {
  uint32_t tgid = 0;
  int32_t llc = -1;  // dense LLC id; -1: no preference
  int32_t cpu = -1;  // preferred CPU; -1: not sent (the LLC's first CPU)
};

// SnapshotEnd is the marker after a snapshot's entries.
struct SnapshotEnd {
  uint64_t incarnation = 0;
  uint64_t sequence = 0;  // the snapshot is consistent at this sequence
};

// MirroredChange is one change of one process's preference after the
// snapshot.
struct MirroredChange {
  uint32_t tgid = 0;
  int32_t llc = -1;  // new dense LLC id; -1: none
  int32_t cpu = -1;  // new preferred CPU; -1: not sent (the LLC's first CPU)
  uint32_t reason = SCHEDCACHE_REASON_NONE;  // why none, when llc is -1
  uint64_t incarnation = 0;
  // Strictly increasing per incarnation; 0: the server sends no sequence
  // (then every change is applied as it comes).
  uint64_t sequence = 0;
};

// MirrorCounters is what the mirror did since Open.
struct MirrorCounters {
  uint64_t snapshots = 0;          // snapshots applied
  uint64_t resyncs = 0;            // snapshots after the first
  uint64_t snapshot_size = 0;      // processes with a preference, last one
  uint64_t stale_deleted = 0;      // entries a snapshot no longer had
  uint64_t changes_applied = 0;    // changes written (upsert or delete)
  uint64_t changes_duplicate = 0;  // sequence already applied: skipped
  uint64_t deletes_exited = 0;     // changes to none with reason exited
  uint64_t deletes_evicted = 0;    // ... with reason evicted (server side)
  // Entries this writer stored that were gone when it deleted them: the
  // LRU hash evicted them because prefs was full.
  uint64_t map_full_evictions = 0;
};

// MakePinDirectory makes `dir` and its missing parents, but only inside a
// mounted bpffs: when the deepest existing ancestor is not on one (or `dir`
// exists and is not on one), FailedPrecondition naming it and how to mount
// a bpffs. It never mounts anything.
absl::Status MakePinDirectory(const std::string& dir);

class PreferenceMirror {
 public:
  // Open opens (or creates) the pinned maps in `dir` (PinnedMaps::Open),
  // writes `llcs` (the session's LLCs, by dense id) and then `meta`
  // (incarnation 0, sequence 0, `policy`). Errors: those of PinnedMaps::Open
  // (not a bpffs, bpf() refused, another ABI), WriteLlcs and WriteMeta.
  static absl::StatusOr<PreferenceMirror> Open(
      const std::string& dir, const LlcCpuLists& llcs, std::string policy,
      const PinnedMapsOptions& options = {});

  PreferenceMirror(PreferenceMirror&&) = default;
  PreferenceMirror& operator=(PreferenceMirror&&) = default;

  // OnSnapshotEntry buffers `entry` until OnSnapshotEnd; a later entry of
  // the same tgid replaces it. Never fails.
  void OnSnapshotEntry(const MirroredPreference& entry);

  // OnSnapshotEnd writes the buffered snapshot: an entry per process with a
  // preference, then deletes every other prefs entry, then meta. An entry
  // that cannot be written (LLC or CPU not of the topology) is skipped
  // alone and named in the InvalidArgument returned after all the rest is
  // written; a failed bpf() stops it there.
  absl::Status OnSnapshotEnd(const SnapshotEnd& end);

  // OnChange applies one change, then meta's sequence. A sequence at or
  // below the last applied one (same incarnation) is a duplicate: skipped,
  // OK. A change of another incarnation than the applied snapshot's is
  // FailedPrecondition and changes nothing: the stream needs a fresh
  // snapshot. A preference outside the topology is InvalidArgument naming
  // the change (nothing written for it; later changes still apply).
  absl::Status OnChange(const MirroredChange& change);

  bool reused() const { return maps_.reused(); }
  const std::string& dir() const { return maps_.dir(); }
  uint64_t incarnation() const { return incarnation_; }
  const MirrorCounters& counters() const { return counters_; }
  const PinnedMapsCounters& map_counters() const { return maps_.counters(); }

 private:
  PreferenceMirror(PinnedMaps maps, LlcCpuLists llcs, std::string policy,
                   absl::flat_hash_set<uint32_t> stored);

  // Store writes `tgid`'s preference (the LLC's first CPU when `cpu` is
  // -1) tagged with `sequence`.
  absl::Status Store(uint32_t tgid, int32_t llc, int32_t cpu,
                     uint64_t sequence);
  // Remove deletes `tgid`'s entry, counting an entry the LRU evicted.
  absl::Status Remove(uint32_t tgid);
  absl::Status WriteMeta();

  PinnedMaps maps_;
  LlcCpuLists llcs_;
  std::string policy_;
  uint64_t incarnation_ = 0;
  uint64_t last_sequence_ = 0;
  // tgids this writer believes prefs holds.
  absl::flat_hash_set<uint32_t> stored_;
  // The snapshot being received, by tgid.
  absl::flat_hash_map<uint32_t, MirroredPreference> pending_snapshot_;
  MirrorCounters counters_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_BPFMAPS_PREFERENCE_MIRROR_H_
