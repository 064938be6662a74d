// PinnedMaps keeps the three pinned BPF maps of docs/INTEGRATION.md (prefs,
// llcs, meta; layout in bpfmaps/schedcache_maps.h) under a bpffs directory,
// through libbpf's low-level bpf() wrappers.
//
// It takes plain inputs (CPU lists, ids, strings) and knows nothing of the
// gRPC API, so `schedcache mirror` and tests drive it alike. It never
// mounts anything: a directory that is not on a bpffs, or a bpf() the
// kernel refuses, is an error that says exactly what is missing.
//
// Thread contract: thread-compatible (one writer; readers are BPF programs
// and other processes, which see each map update whole).
#ifndef SCHEDCACHE_BPFMAPS_PINNED_MAPS_H_
#define SCHEDCACHE_BPFMAPS_PINNED_MAPS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bpfmaps/schedcache_maps.h"

namespace schedcache {

// LlcCpuLists holds, for each dense LLC id (the index), the ids of its CPUs.
using LlcCpuLists = std::vector<std::vector<uint32_t>>;

struct PinnedMapsOptions {
  // Mode of the pinned files this writer creates; pins it reuses keep
  // theirs.
  mode_t pin_mode = 0600;
  // max_entries of a new prefs map. The kernel's LRU hash evicts its least
  // recently used entry when an update finds it full, without telling the
  // writer, so the map must hold every process that has a preference.
  uint32_t prefs_capacity = 65536;
  // max_entries of a new llcs map: the most LLCs a topology may have.
  uint32_t llcs_capacity = 1024;
};

// MetaUpdate is what meta says beyond the ABI version and the LLC count.
struct MetaUpdate {
  uint64_t incarnation = 0;
  uint64_t last_seq = 0;
  uint64_t updated_ns = 0;  // BpfClockNowNs() clock
  std::string policy;       // at most SCHEDCACHE_POLICY_NAME_LEN - 1 bytes
};

// Preference is one process's preferred LLC (a dense id) and CPU.
struct Preference {
  int32_t llc = -1;
  int32_t cpu = -1;
  uint64_t seq = 0;
  uint64_t updated_ns = 0;  // BpfClockNowNs() clock
};

// PinnedMapsCounters counts prefs writes. Evictions by the LRU hash are not
// among them: the kernel reports none to the writer (an update into a full
// map succeeds after evicting), which is why prefs_capacity must be large.
struct PinnedMapsCounters {
  uint64_t upserts = 0;
  uint64_t deletes = 0;
  uint64_t deletes_absent = 0;  // the map held no entry for the tgid
  uint64_t failed_writes = 0;   // upserts and deletes that returned an error
};

// EncodeLlcs turns CPU lists into llcs values: first_cpu is the lowest CPU
// (the kernel's sd_llc_id). InvalidArgument naming the LLC and the CPU for
// an LLC without CPUs, a CPU at or beyond SCHEDCACHE_MAX_CPUS, or a CPU in
// two LLCs (or twice in one).
absl::StatusOr<std::vector<schedcache_llc>> EncodeLlcs(const LlcCpuLists& llcs);

// EncodeMeta builds meta's value; InvalidArgument when the policy name
// does not fit.
absl::StatusOr<schedcache_meta> EncodeMeta(uint32_t nr_llcs,
                                           const MetaUpdate& update);

// EncodePref builds a prefs value against the LLCs `llcs`; InvalidArgument
// naming the value when `pref.llc` is not one of them or `pref.cpu` is not
// a CPU of that LLC.
absl::StatusOr<schedcache_pref> EncodePref(
    const std::vector<schedcache_llc>& llcs, const Preference& pref);

// CheckBpffs returns OK when `dir` is a directory on a bpffs, else
// FailedPrecondition saying what is missing and how to mount one.
absl::Status CheckBpffs(const std::string& dir);

// BpfError turns a failed bpf() call (`call`, on `path` when not empty)
// with errno `err` into a Status. EPERM says bpf() was refused and why
// (capabilities, kernel.unprivileged_bpf_disabled, seccomp, as this
// process sees them); ENOSYS that the kernel has no bpf().
absl::Status BpfError(int err, absl::string_view call, absl::string_view path);

// BpfClockNowNs returns the time on the clock of BPF's bpf_ktime_get_ns()
// (CLOCK_MONOTONIC), the clock of every updated_ns in the maps.
uint64_t BpfClockNowNs();

// MapFd owns one BPF map file descriptor (-1: none) and closes it.
class MapFd {
 public:
  MapFd() = default;
  explicit MapFd(int fd) : fd_(fd) {}
  MapFd(MapFd&& other) noexcept;
  MapFd& operator=(MapFd&& other) noexcept;
  ~MapFd();
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// PinnedMapsForReading is the set as a reader (a BPF scheduler) takes it:
// the three maps and what meta and llcs said when it was opened.
struct PinnedMapsForReading {
  MapFd prefs;
  MapFd llcs;
  MapFd meta;
  schedcache_meta meta_value{};
  std::vector<schedcache_llc> llcs_in_use;  // ids 0 .. meta.nr_llcs - 1
};

// OpenPinnedForReading opens DIR's pinned prefs, llcs and meta, creating
// nothing: NotFound naming the first file that is not pinned (the writer,
// `schedcache mirror --pin-dir DIR`, makes them); FailedPrecondition, as
// PinnedMaps::Open, naming the file of another layout or ABI version.
absl::StatusOr<PinnedMapsForReading> OpenPinnedForReading(
    const std::string& dir);

class PinnedMaps {
 public:
  // Open opens DIR's pinned prefs, llcs and meta, creating and pinning
  // those that are missing. Pinned maps of this ABI (type, key and value
  // sizes, meta.abi_version) are reused, entries and all; another ABI or
  // layout is FailedPrecondition naming the file, the found and the
  // expected values, and nothing is created. A new meta is pinned last,
  // holding its ABI version, so a pinned meta means a complete set.
  // InvalidArgument for a zero capacity or a pin_mode beyond 07777.
  static absl::StatusOr<PinnedMaps> Open(const std::string& dir,
                                         const PinnedMapsOptions& options = {});

  PinnedMaps(PinnedMaps&& other) = default;
  PinnedMaps& operator=(PinnedMaps&& other) = default;

  // reused is true when Open found meta pinned (the maps of an earlier
  // writer), false when it created the set.
  bool reused() const { return reused_; }
  const std::string& dir() const { return dir_; }

  // WriteLlcs stores the LLCs (EncodeLlcs) at their dense ids, clears the
  // entries beyond them, and makes them the LLCs prefs are checked
  // against and meta counts. The whole table is refused (nothing written)
  // when an LLC is invalid or there are more LLCs than llcs holds.
  absl::Status WriteLlcs(const LlcCpuLists& llcs);

  // WriteMeta stores meta with this ABI and the LLC count of WriteLlcs (or
  // of the reused meta before any WriteLlcs).
  absl::Status WriteMeta(const MetaUpdate& update);

  // UpsertPref stores `pref` for `tgid`. REQUIRES: WriteLlcs succeeded on
  // this object (FailedPrecondition otherwise), and `pref` is valid for
  // those LLCs (EncodePref).
  absl::Status UpsertPref(uint32_t tgid, const Preference& pref);

  // DeletePref removes `tgid`'s entry; an absent entry is OK (counted in
  // deletes_absent): the LRU may have evicted it.
  absl::Status DeletePref(uint32_t tgid);

  // PrefTgids lists the tgids prefs holds, in the map's order: what a
  // resync compares with a fresh snapshot to delete the processes gone.
  absl::StatusOr<std::vector<uint32_t>> PrefTgids() const;

  const PinnedMapsCounters& counters() const { return counters_; }

 private:
  PinnedMaps(std::string dir, MapFd prefs, MapFd llcs, MapFd meta,
             uint32_t llcs_capacity, uint32_t nr_llcs, bool reused);

  std::string dir_;
  MapFd prefs_;
  MapFd llcs_;
  MapFd meta_;
  uint32_t llcs_capacity_;  // max_entries of llcs (created or reused)
  uint32_t nr_llcs_;        // what meta counts
  bool reused_;
  std::vector<schedcache_llc> llcs_written_;  // by WriteLlcs; checks prefs
  PinnedMapsCounters counters_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_BPFMAPS_PINNED_MAPS_H_
