#include "bpfmaps/preference_mirror.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace schedcache {

absl::Status MakePinDirectory(const std::string& dir) {
  std::error_code error;
  std::filesystem::path existing = dir;
  while (!std::filesystem::exists(existing, error) &&
         existing.has_relative_path()) {
    existing = existing.parent_path();
  }
  if (existing == dir) return CheckBpffs(dir);
  if (absl::Status on_bpffs = CheckBpffs(existing.string()); !on_bpffs.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pin directory ", dir, " does not exist, and ",
                     on_bpffs.message()));
  }
  // The directories get the umask's mode: the pinned files' own modes
  // (--map-mode) say who may open the maps.
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pin directory ", dir, ": cannot make it: ", error.message()));
  }
  return absl::OkStatus();
}

PreferenceMirror::PreferenceMirror(PinnedMaps maps, LlcCpuLists llcs,
                                   std::string policy,
                                   absl::flat_hash_set<uint32_t> stored)
    : maps_(std::move(maps)),
      llcs_(std::move(llcs)),
      policy_(std::move(policy)),
      stored_(std::move(stored)) {}

absl::StatusOr<PreferenceMirror> PreferenceMirror::Open(
    const std::string& dir, const LlcCpuLists& llcs, std::string policy,
    const PinnedMapsOptions& options) {
  ASSIGN_OR_RETURN(PinnedMaps maps, PinnedMaps::Open(dir, options));
  RETURN_IF_ERROR(maps.WriteLlcs(llcs));
  // Entries a previous writer left stay until the first snapshot says
  // which of them still hold: a scheduler keeps its hints meanwhile.
  ASSIGN_OR_RETURN(const std::vector<uint32_t> left, maps.PrefTgids());
  PreferenceMirror mirror(std::move(maps), llcs, std::move(policy),
                          absl::flat_hash_set<uint32_t>(left.begin(),
                                                        left.end()));
  RETURN_IF_ERROR(mirror.WriteMeta());
  return mirror;
}

void PreferenceMirror::OnSnapshotEntry(const MirroredPreference& entry) {
  pending_snapshot_[entry.tgid] = entry;
}

absl::Status PreferenceMirror::OnSnapshotEnd(const SnapshotEnd& end) {
  const absl::flat_hash_map<uint32_t, MirroredPreference> snapshot =
      std::exchange(pending_snapshot_, {});
  std::vector<std::string> refused;
  uint64_t with_preference = 0;
  for (const auto& [tgid, entry] : snapshot) {
    if (entry.llc < 0) continue;
    const absl::Status stored = Store(tgid, entry.llc, entry.cpu, end.sequence);
    if (absl::IsInvalidArgument(stored)) {
      refused.push_back(std::string(stored.message()));
      continue;
    }
    RETURN_IF_ERROR(stored);
    ++with_preference;
  }
  // What the map holds, not what this writer remembers: entries of an
  // earlier writer count too.
  ASSIGN_OR_RETURN(const std::vector<uint32_t> held, maps_.PrefTgids());
  for (const uint32_t tgid : held) {
    const auto it = snapshot.find(tgid);
    if (it != snapshot.end() && it->second.llc >= 0) continue;
    RETURN_IF_ERROR(Remove(tgid));
    ++counters_.stale_deleted;
  }
  incarnation_ = end.incarnation;
  last_sequence_ = end.sequence;
  RETURN_IF_ERROR(WriteMeta());
  if (counters_.snapshots > 0) ++counters_.resyncs;
  ++counters_.snapshots;
  counters_.snapshot_size = with_preference;
  if (!refused.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot at sequence ", end.sequence, ": ",
                     refused.size(), " entries not written: ",
                     absl::StrJoin(refused, "; ")));
  }
  return absl::OkStatus();
}

absl::Status PreferenceMirror::OnChange(const MirroredChange& change) {
  if (counters_.snapshots > 0 && change.incarnation != incarnation_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "change of tgid ", change.tgid, " at sequence ", change.sequence,
        " is of incarnation ", change.incarnation, ", the maps hold incarnation ",
        incarnation_, ": a fresh snapshot is needed"));
  }
  if (change.sequence != 0 && change.sequence <= last_sequence_) {
    ++counters_.changes_duplicate;
    return absl::OkStatus();
  }
  if (change.llc < 0) {
    RETURN_IF_ERROR(Remove(change.tgid));
    if (change.reason == SCHEDCACHE_REASON_EXITED) ++counters_.deletes_exited;
    if (change.reason == SCHEDCACHE_REASON_EVICTED) ++counters_.deletes_evicted;
  } else {
    RETURN_IF_ERROR(
        Store(change.tgid, change.llc, change.cpu, change.sequence));
  }
  ++counters_.changes_applied;
  incarnation_ = change.incarnation;
  last_sequence_ = std::max(last_sequence_, change.sequence);
  return WriteMeta();
}

absl::Status PreferenceMirror::Store(uint32_t tgid, int32_t llc, int32_t cpu,
                                     uint64_t sequence) {
  // A server that sends no CPU gets the LLC's first CPU (EncodeLlcs's
  // first_cpu); an LLC outside the topology is refused by UpsertPref.
  if (cpu < 0 && llc >= 0 && static_cast<size_t>(llc) < llcs_.size()) {
    cpu = static_cast<int32_t>(
        *std::min_element(llcs_[llc].begin(), llcs_[llc].end()));
  }
  RETURN_IF_ERROR(maps_.UpsertPref(
      tgid, {.llc = llc, .cpu = cpu, .seq = sequence,
             .updated_ns = BpfClockNowNs()}));
  stored_.insert(tgid);
  return absl::OkStatus();
}

absl::Status PreferenceMirror::Remove(uint32_t tgid) {
  const uint64_t absent_before = maps_.counters().deletes_absent;
  RETURN_IF_ERROR(maps_.DeletePref(tgid));
  const bool was_stored = stored_.erase(tgid) > 0;
  if (was_stored && maps_.counters().deletes_absent > absent_before) {
    ++counters_.map_full_evictions;
  }
  return absl::OkStatus();
}

absl::Status PreferenceMirror::WriteMeta() {
  return maps_.WriteMeta({.incarnation = incarnation_,
                          .last_seq = last_sequence_,
                          .updated_ns = BpfClockNowNs(),
                          .policy = policy_});
}

}  // namespace schedcache
