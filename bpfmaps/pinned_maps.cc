#include "bpfmaps/pinned_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace schedcache {
namespace {

// MapSpec is what this ABI expects of one pinned map.
struct MapSpec {
  const char* name;
  bpf_map_type type;
  uint32_t key_size;
  uint32_t value_size;
  const char* value_type;  // for messages
};

constexpr MapSpec kPrefsSpec{SCHEDCACHE_PREFS_MAP_NAME, BPF_MAP_TYPE_LRU_HASH,
                             sizeof(__u32), sizeof(schedcache_pref),
                             "struct schedcache_pref"};
constexpr MapSpec kLlcsSpec{SCHEDCACHE_LLCS_MAP_NAME, BPF_MAP_TYPE_ARRAY,
                            sizeof(__u32), sizeof(schedcache_llc),
                            "struct schedcache_llc"};
constexpr MapSpec kMetaSpec{SCHEDCACHE_META_MAP_NAME, BPF_MAP_TYPE_ARRAY,
                            sizeof(__u32), sizeof(schedcache_meta),
                            "struct schedcache_meta"};
constexpr uint32_t kMetaKey = 0;

// ReadProcLine returns the rest of the line of `path` that starts with
// `prefix` (the whole first line when `prefix` is empty), or "unknown".
std::string ReadProcLine(const char* path, absl::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::string_view(line).substr(0, prefix.size()) == prefix) {
      const size_t start = line.find_first_not_of(" \t", prefix.size());
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "unknown";
}

// HasCapability reports whether bit `cap` is set in this process's
// effective capabilities (/proc/self/status CapEff, hexadecimal).
bool HasCapability(int cap) {
  const std::string eff = ReadProcLine("/proc/self/status", "CapEff:");
  char* end = nullptr;
  const unsigned long long mask = std::strtoull(eff.c_str(), &end, 16);
  return end != eff.c_str() && ((mask >> cap) & 1) != 0;
}

// DescribeRefusal says why the kernel refuses bpf() to this process.
std::string DescribeRefusal() {
  constexpr int kCapSysAdmin = 21;
  constexpr int kCapBpf = 39;
  const std::string unprivileged =
      ReadProcLine("/proc/sys/kernel/unprivileged_bpf_disabled", "");
  const std::string seccomp = ReadProcLine("/proc/self/status", "Seccomp:");
  if (!HasCapability(kCapBpf) && !HasCapability(kCapSysAdmin)) {
    return absl::StrCat(
        "this process has neither CAP_BPF nor CAP_SYS_ADMIN (run it as "
        "root) and kernel.unprivileged_bpf_disabled is ",
        unprivileged, " (Seccomp mode ", seccomp, ")");
  }
  return absl::StrCat(
      "this process has CAP_BPF or CAP_SYS_ADMIN, so a seccomp filter "
      "(Seccomp mode ",
      seccomp, " in /proc/self/status; 2 is a filter) or an LSM denied it");
}

std::string PinPath(const std::string& dir, const MapSpec& spec) {
  return absl::StrCat(dir, "/", spec.name);
}

// FoundMap is a map found pinned, with its capacity.
struct FoundMap {
  MapFd fd;
  uint32_t max_entries;
};

// FindPinned opens `path` when it is pinned (nullopt when it is not) and
// checks that its type and sizes are `spec`'s.
absl::StatusOr<std::optional<FoundMap>> FindPinned(const std::string& path,
                                                   const MapSpec& spec) {
  MapFd fd(bpf_obj_get(path.c_str()));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    return BpfError(errno, "BPF_OBJ_GET", path);
  }
  bpf_map_info info{};
  uint32_t info_len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &info_len) != 0) {
    return BpfError(errno, "BPF_OBJ_GET_INFO_BY_FD", path);
  }
  const auto mismatch = [&](absl::string_view field, const auto& found,
                            const auto& expected) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": ", field, " is ", found, ", map ABI ",
        SCHEDCACHE_MAP_ABI_VERSION, " expects ", expected, " (",
        spec.value_type,
        "); it was pinned by another schedcache version or another program: "
        "stop its readers and remove the pinned prefs, llcs and meta"));
  };
  if (info.type != spec.type) {
    const char* found =
        libbpf_bpf_map_type_str(static_cast<bpf_map_type>(info.type));
    return mismatch("map type", found != nullptr ? found : "unknown",
                    libbpf_bpf_map_type_str(spec.type));
  }
  if (info.key_size != spec.key_size) {
    return mismatch("key_size", info.key_size, spec.key_size);
  }
  if (info.value_size != spec.value_size) {
    return mismatch("value_size", info.value_size, spec.value_size);
  }
  return FoundMap{std::move(fd), info.max_entries};
}

// CheckMetaAbi reads meta's value and checks its ABI version; returns its
// LLC count.
absl::StatusOr<uint32_t> CheckMetaAbi(int fd, const std::string& path) {
  schedcache_meta meta{};
  if (bpf_map_lookup_elem(fd, &kMetaKey, &meta) != 0) {
    return BpfError(errno, "BPF_MAP_LOOKUP_ELEM", path);
  }
  if (meta.abi_version != SCHEDCACHE_MAP_ABI_VERSION) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": abi_version is ", meta.abi_version, ", this program's is ",
        SCHEDCACHE_MAP_ABI_VERSION,
        "; stop the maps' readers and remove the pinned prefs, llcs and meta, "
        "or run the schedcache that wrote them"));
  }
  return meta.nr_llcs;
}

// CreatePinned creates a map per `spec`, stores `initial_meta` at key 0
// when given (before pinning, so no reader sees meta without its ABI),
// pins it at `path` and gives the file `mode`.
absl::StatusOr<MapFd> CreatePinned(const std::string& path, const MapSpec& spec,
                                   uint32_t max_entries, mode_t mode,
                                   const schedcache_meta* initial_meta) {
  MapFd fd(bpf_map_create(spec.type, spec.name, spec.key_size, spec.value_size,
                          max_entries, nullptr));
  if (fd.get() < 0) return BpfError(errno, "BPF_MAP_CREATE", path);
  if (initial_meta != nullptr &&
      bpf_map_update_elem(fd.get(), &kMetaKey, initial_meta, BPF_ANY) != 0) {
    return BpfError(errno, "BPF_MAP_UPDATE_ELEM", path);
  }
  if (bpf_obj_pin(fd.get(), path.c_str()) != 0) {
    return BpfError(errno, "BPF_OBJ_PIN", path);
  }
  if (chmod(path.c_str(), mode) != 0) {
    return absl::ErrnoToStatus(errno,
                               absl::StrFormat("chmod %s to %04o", path, mode));
  }
  return fd;
}

// CheckOptions refuses capacities the kernel would refuse with a bare
// EINVAL, and modes that are not permission bits.
absl::Status CheckOptions(const PinnedMapsOptions& options) {
  if (options.prefs_capacity == 0 || options.llcs_capacity == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "map capacities must be at least 1: prefs_capacity ",
        options.prefs_capacity, ", llcs_capacity ", options.llcs_capacity));
  }
  if ((options.pin_mode & ~mode_t{07777}) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pin_mode %04o is not a file mode (at most 07777)", options.pin_mode));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BpfError(int err, absl::string_view call, absl::string_view path) {
  const std::string what = path.empty()
                               ? absl::StrCat("bpf(", call, ")")
                               : absl::StrCat("bpf(", call, ") on ", path);
  switch (err) {
    case EPERM:
      return absl::PermissionDeniedError(absl::StrCat(
          what, ": bpf() was refused (EPERM): ", DescribeRefusal()));
    case EACCES:
      return absl::PermissionDeniedError(absl::StrCat(
          what,
          ": permission denied (EACCES): the pinned file's mode or "
          "owner does not let this user open it"));
    case ENOSYS:
      return absl::UnimplementedError(absl::StrCat(
          what,
          ": this kernel has no bpf() (ENOSYS): it is built without "
          "CONFIG_BPF_SYSCALL, or a seccomp filter hides the call"));
    default:
      return absl::ErrnoToStatus(err, what);
  }
}

absl::Status CheckBpffs(const std::string& dir) {
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("pin directory ", dir, ": ", std::strerror(errno),
                     "; make it a bpffs (mkdir ", dir, " && mount -t bpf bpf ",
                     dir, ") or a directory inside a mounted one"));
  }
  if (static_cast<uint64_t>(fs.f_type) != BPF_FS_MAGIC) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, " is not on a bpffs (filesystem magic 0x",
        absl::Hex(static_cast<uint64_t>(fs.f_type)), ", bpffs is 0x",
        absl::Hex(BPF_FS_MAGIC), "): mount -t bpf bpf ", dir));
  }
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("pin directory ", dir, " is not a directory"));
  }
  return absl::OkStatus();
}

uint64_t BpfClockNowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u +
         static_cast<uint64_t>(now.tv_nsec);
}

absl::StatusOr<std::vector<schedcache_llc>> EncodeLlcs(
    const LlcCpuLists& llcs) {
  std::vector<schedcache_llc> encoded(llcs.size());
  // owner[c]: the LLC CPU c was seen in, -1 before.
  std::vector<int64_t> owner(SCHEDCACHE_MAX_CPUS, -1);
  for (size_t id = 0; id < llcs.size(); ++id) {
    if (llcs[id].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("llc ", id, " has no CPUs"));
    }
    schedcache_llc& out = encoded[id];
    out.first_cpu = llcs[id].front();
    for (const uint32_t cpu : llcs[id]) {
      if (cpu >= SCHEDCACHE_MAX_CPUS) {
        return absl::InvalidArgumentError(
            absl::StrCat("llc ", id, ": cpu ", cpu,
                         " is beyond the maps' SCHEDCACHE_MAX_CPUS (",
                         SCHEDCACHE_MAX_CPUS, ")"));
      }
      if (owner[cpu] >= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "llc ", id, ": cpu ", cpu, " is already in llc ", owner[cpu]));
      }
      owner[cpu] = static_cast<int64_t>(id);
      out.cpus[cpu / 64] |= uint64_t{1} << (cpu % 64);
      out.first_cpu = std::min(out.first_cpu, cpu);
      ++out.nr_cpus;
    }
  }
  return encoded;
}

absl::StatusOr<schedcache_meta> EncodeMeta(uint32_t nr_llcs,
                                           const MetaUpdate& update) {
  schedcache_meta meta{};
  if (update.policy.size() >= sizeof(meta.policy)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy name \"", update.policy, "\" is ", update.policy.size(),
        " bytes; meta holds at most ", sizeof(meta.policy) - 1));
  }
  meta.abi_version = SCHEDCACHE_MAP_ABI_VERSION;
  meta.nr_llcs = nr_llcs;
  meta.incarnation = update.incarnation;
  meta.last_seq = update.last_seq;
  meta.updated_ns = update.updated_ns;
  std::memcpy(meta.policy, update.policy.data(), update.policy.size());
  return meta;
}

absl::StatusOr<schedcache_pref> EncodePref(
    const std::vector<schedcache_llc>& llcs, const Preference& pref) {
  if (pref.llc < 0 || static_cast<size_t>(pref.llc) >= llcs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("preference llc ", pref.llc, " is not one of the ",
                     llcs.size(), " LLCs written"));
  }
  const schedcache_llc& llc = llcs[pref.llc];
  const bool in_llc = pref.cpu >= 0 && pref.cpu < SCHEDCACHE_MAX_CPUS &&
                      ((llc.cpus[pref.cpu / 64] >> (pref.cpu % 64)) & 1) != 0;
  if (!in_llc) {
    return absl::InvalidArgumentError(absl::StrCat(
        "preference cpu ", pref.cpu, " is not a CPU of llc ", pref.llc,
        " (first cpu ", llc.first_cpu, ", ", llc.nr_cpus, " cpus)"));
  }
  return schedcache_pref{.llc = pref.llc,
                         .cpu = pref.cpu,
                         .llc_first_cpu = static_cast<__s32>(llc.first_cpu),
                         .reason = SCHEDCACHE_REASON_NONE,
                         .seq = pref.seq,
                         .updated_ns = pref.updated_ns};
}

MapFd::MapFd(MapFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

MapFd& MapFd::operator=(MapFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

MapFd::~MapFd() {
  if (fd_ >= 0) close(fd_);
}

PinnedMaps::PinnedMaps(std::string dir, MapFd prefs, MapFd llcs, MapFd meta,
                       uint32_t llcs_capacity, uint32_t nr_llcs, bool reused)
    : dir_(std::move(dir)),
      prefs_(std::move(prefs)),
      llcs_(std::move(llcs)),
      meta_(std::move(meta)),
      llcs_capacity_(llcs_capacity),
      nr_llcs_(nr_llcs),
      reused_(reused) {}

absl::StatusOr<PinnedMaps> PinnedMaps::Open(const std::string& dir,
                                            const PinnedMapsOptions& options) {
  RETURN_IF_ERROR(CheckOptions(options));
  RETURN_IF_ERROR(CheckBpffs(dir));
  // Indexes into the arrays below, in creation order: meta last, so a
  // pinned meta means a complete set.
  enum { kPrefs, kLlcs, kMeta, kMaps };
  const MapSpec* specs[kMaps] = {&kPrefsSpec, &kLlcsSpec, &kMetaSpec};
  const uint32_t capacities[kMaps] = {options.prefs_capacity,
                                      options.llcs_capacity, 1};
  // Everything pinned is checked before anything is created, so a refusal
  // leaves the directory as it was.
  std::optional<FoundMap> found[kMaps];
  for (int i = 0; i < kMaps; ++i) {
    ASSIGN_OR_RETURN(found[i], FindPinned(PinPath(dir, *specs[i]), *specs[i]));
  }
  uint32_t nr_llcs = 0;
  if (found[kMeta]) {
    ASSIGN_OR_RETURN(
        nr_llcs, CheckMetaAbi(found[kMeta]->fd.get(), PinPath(dir, kMetaSpec)));
  }
  ASSIGN_OR_RETURN(const schedcache_meta initial_meta,
                   EncodeMeta(/*nr_llcs=*/0, MetaUpdate{}));
  MapFd fds[kMaps];
  for (int i = 0; i < kMaps; ++i) {
    if (found[i]) {
      fds[i] = std::move(found[i]->fd);
      continue;
    }
    ASSIGN_OR_RETURN(
        fds[i],
        CreatePinned(PinPath(dir, *specs[i]), *specs[i], capacities[i],
                     options.pin_mode, i == kMeta ? &initial_meta : nullptr));
  }
  const uint32_t llcs_capacity =
      found[kLlcs] ? found[kLlcs]->max_entries : options.llcs_capacity;
  return PinnedMaps(dir, std::move(fds[kPrefs]), std::move(fds[kLlcs]),
                    std::move(fds[kMeta]), llcs_capacity, nr_llcs,
                    found[kMeta].has_value());
}

absl::Status PinnedMaps::WriteLlcs(const LlcCpuLists& llcs) {
  ASSIGN_OR_RETURN(std::vector<schedcache_llc> encoded, EncodeLlcs(llcs));
  const std::string path = PinPath(dir_, kLlcsSpec);
  if (encoded.size() > llcs_capacity_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " holds ", llcs_capacity_,
                     " LLCs, the topology has ", encoded.size(),
                     "; remove the pinned maps and create them with a "
                     "larger llcs capacity"));
  }
  const schedcache_llc empty{};
  for (uint32_t id = 0; id < llcs_capacity_; ++id) {
    const schedcache_llc& value = id < encoded.size() ? encoded[id] : empty;
    if (bpf_map_update_elem(llcs_.get(), &id, &value, BPF_ANY) != 0) {
      return BpfError(errno, "BPF_MAP_UPDATE_ELEM", path);
    }
  }
  nr_llcs_ = static_cast<uint32_t>(encoded.size());
  llcs_written_ = std::move(encoded);
  return absl::OkStatus();
}

absl::Status PinnedMaps::WriteMeta(const MetaUpdate& update) {
  ASSIGN_OR_RETURN(const schedcache_meta meta, EncodeMeta(nr_llcs_, update));
  if (bpf_map_update_elem(meta_.get(), &kMetaKey, &meta, BPF_ANY) != 0) {
    return BpfError(errno, "BPF_MAP_UPDATE_ELEM", PinPath(dir_, kMetaSpec));
  }
  return absl::OkStatus();
}

absl::Status PinnedMaps::UpsertPref(uint32_t tgid, const Preference& pref) {
  absl::Status status = [&]() -> absl::Status {
    if (llcs_written_.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "preference of tgid ", tgid, ": no LLCs written yet (WriteLlcs)"));
    }
    absl::StatusOr<schedcache_pref> value = EncodePref(llcs_written_, pref);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tgid ", tgid, ": ", value.status().message()));
    }
    if (bpf_map_update_elem(prefs_.get(), &tgid, &*value, BPF_ANY) != 0) {
      return BpfError(errno, "BPF_MAP_UPDATE_ELEM", PinPath(dir_, kPrefsSpec));
    }
    return absl::OkStatus();
  }();
  if (status.ok()) {
    ++counters_.upserts;
  } else {
    ++counters_.failed_writes;
  }
  return status;
}

absl::Status PinnedMaps::DeletePref(uint32_t tgid) {
  if (bpf_map_delete_elem(prefs_.get(), &tgid) == 0) {
    ++counters_.deletes;
    return absl::OkStatus();
  }
  if (errno == ENOENT) {
    ++counters_.deletes_absent;
    return absl::OkStatus();
  }
  ++counters_.failed_writes;
  return BpfError(errno, "BPF_MAP_DELETE_ELEM", PinPath(dir_, kPrefsSpec));
}

absl::StatusOr<std::vector<uint32_t>> PinnedMaps::PrefTgids() const {
  std::vector<uint32_t> tgids;
  uint32_t key = 0;
  uint32_t next = 0;
  // A null key asks for the first key; ENOENT ends the walk.
  const uint32_t* previous = nullptr;
  while (bpf_map_get_next_key(prefs_.get(), previous, &next) == 0) {
    tgids.push_back(next);
    key = next;
    previous = &key;
  }
  if (errno != ENOENT) {
    return BpfError(errno, "BPF_MAP_GET_NEXT_KEY", PinPath(dir_, kPrefsSpec));
  }
  return tgids;
}

absl::StatusOr<PinnedMapsForReading> OpenPinnedForReading(
    const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 && errno == ENOENT) {
    return absl::NotFoundError(absl::StrCat(
        "pin directory ", dir, " does not exist: `schedcache mirror --pin-dir ",
        dir, "` makes it and the maps"));
  }
  RETURN_IF_ERROR(CheckBpffs(dir));
  PinnedMapsForReading maps;
  const std::pair<const MapSpec*, MapFd*> wanted[] = {
      {&kPrefsSpec, &maps.prefs}, {&kLlcsSpec, &maps.llcs},
      {&kMetaSpec, &maps.meta}};
  for (const auto& [spec, fd] : wanted) {
    const std::string path = PinPath(dir, *spec);
    ASSIGN_OR_RETURN(std::optional<FoundMap> found, FindPinned(path, *spec));
    if (!found) {
      return absl::NotFoundError(absl::StrCat(
          path, " is not pinned: `schedcache mirror --pin-dir ", dir,
          "` makes the maps"));
    }
    *fd = std::move(found->fd);
  }
  const std::string meta_path = PinPath(dir, kMetaSpec);
  ASSIGN_OR_RETURN(const uint32_t nr_llcs,
                   CheckMetaAbi(maps.meta.get(), meta_path));
  if (bpf_map_lookup_elem(maps.meta.get(), &kMetaKey, &maps.meta_value) != 0) {
    return BpfError(errno, "BPF_MAP_LOOKUP_ELEM", meta_path);
  }
  maps.llcs_in_use.resize(nr_llcs);
  for (uint32_t id = 0; id < nr_llcs; ++id) {
    if (bpf_map_lookup_elem(maps.llcs.get(), &id, &maps.llcs_in_use[id]) != 0) {
      return BpfError(errno, "BPF_MAP_LOOKUP_ELEM", PinPath(dir, kLlcsSpec));
    }
  }
  return maps;
}

}  // namespace schedcache
