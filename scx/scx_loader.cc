#include "scx/scx_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errno_status.h"
#include "common/status_macros.h"
#include "bpfmaps/pinned_maps.h"
#include "scx/schedcache_scx.h"
#include "schedcache_scx.skel.h"  // generated from schedcache_scx.bpf.c

namespace schedcache {
namespace {

// ReadTrimmed returns the file's content without surrounding whitespace,
// or nullopt when it cannot be read.
std::optional<std::string> ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

// PrintLibbpf passes libbpf's warnings (a refused load's verifier log among
// them) to stderr; its debug chatter is dropped.
int PrintLibbpf(libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  std::fputs("libbpf: ", stderr);
  return std::vfprintf(stderr, format, args);
}

// Bounded is the text of a NUL-terminated char array of N bytes, stopping
// at its end should the NUL be missing.
template <size_t N>
std::string Bounded(const char (&text)[N]) {
  return std::string(text, strnlen(text, N));
}

absl::Status LibbpfError(int error, absl::string_view call) {
  const int err = error < 0 ? -error : error;
  return ErrnoError(absl::ErrnoToStatusCode(err),
                    absl::StrCat(call, " failed (libbpf's messages above)"),
                    err);
}

}  // namespace

absl::Status CheckSchedExt(const std::string& dir) {
  struct stat info{};
  if (stat(dir.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this kernel has no sched_ext (CONFIG_SCHED_CLASS_EXT): ", dir,
        " is missing"));
  }
  const std::optional<std::string> state = ReadTrimmed(dir + "/state");
  if (!state) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", dir, "/state: ", std::strerror(errno)));
  }
  if (*state == "disabled") return absl::OkStatus();
  const std::optional<std::string> ops = ReadTrimmed(dir + "/root/ops");
  return absl::FailedPreconditionError(absl::StrCat(
      "a sched_ext scheduler is already running: ",
      ops ? absl::StrCat("\"", *ops, "\" (", dir, "/root/ops)")
          : "its name is unknown",
      ", state ", *state, " (", dir,
      "/state); stop it before starting another"));
}

absl::StatusOr<std::vector<uint32_t>> ParseCpuList(absl::string_view text) {
  std::vector<uint32_t> cpus;
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a CPU list (e.g. 0-3,6)"));
  };
  for (absl::string_view range :
       absl::StrSplit(absl::StripAsciiWhitespace(text), ',')) {
    const std::pair<absl::string_view, absl::string_view> ends =
        absl::StrSplit(range, absl::MaxSplits('-', 1));
    uint32_t first = 0;
    uint32_t last = 0;
    if (!absl::SimpleAtoi(ends.first, &first)) return bad();
    last = first;
    if (absl::StrContains(range, '-') && !absl::SimpleAtoi(ends.second, &last)) {
      return bad();
    }
    if (last < first || last >= SCHEDCACHE_MAX_CPUS) return bad();
    for (uint32_t cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

absl::StatusOr<std::vector<int32_t>> BuildCpuLlcTable(
    const std::vector<schedcache_llc>& llcs, uint32_t nr_cpus,
    absl::Span<const uint32_t> online) {
  if (nr_cpus > SCHEDCACHE_SCX_MAX_CPUS) {
    return absl::InvalidArgumentError(
        absl::StrCat("this machine has ", nr_cpus,
                     " possible CPUs; schedcache-scx handles at most ",
                     SCHEDCACHE_SCX_MAX_CPUS));
  }
  std::vector<int32_t> table(nr_cpus, -1);
  for (size_t id = 0; id < llcs.size(); ++id) {
    for (uint32_t cpu = 0; cpu < SCHEDCACHE_MAX_CPUS; ++cpu) {
      if (((llcs[id].cpus[cpu / 64] >> (cpu % 64)) & 1) == 0) continue;
      if (cpu >= nr_cpus) {
        return absl::InvalidArgumentError(absl::StrCat(
            "llcs entry ", id, " names CPU ", cpu, ", this machine has ",
            nr_cpus, " possible CPUs: the maps describe another machine"));
      }
      table[cpu] = static_cast<int32_t>(id);
    }
  }
  for (const uint32_t cpu : online) {
    if (cpu >= nr_cpus || table[cpu] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "online CPU ", cpu,
          " is in no LLC of llcs: the maps describe another machine"));
    }
  }
  for (int32_t& llc : table) llc = llc < 0 ? 0 : llc;
  return table;
}

absl::StatusOr<std::unique_ptr<ScxScheduler>> ScxScheduler::Start(
    const ScxOptions& options) {
  RETURN_IF_ERROR(CheckSchedExt(options.sched_ext_dir));
  if (options.euid != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "schedcache-scx must run as root (effective uid ", options.euid,
        "): registering a sched_ext scheduler needs CAP_SYS_ADMIN"));
  }
  ASSIGN_OR_RETURN(PinnedMapsForReading maps,
                   OpenPinnedForReading(options.pin_dir));
  if (maps.llcs_in_use.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        options.pin_dir, "/meta: nr_llcs is 0, llcs holds no LLC yet: start "
        "`schedcache mirror --pin-dir ", options.pin_dir, "` first"));
  }
  const std::optional<std::string> online_text =
      ReadTrimmed(options.online_cpus_file);
  if (!online_text) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", options.online_cpus_file));
  }
  ASSIGN_OR_RETURN(const std::vector<uint32_t> online,
                   ParseCpuList(*online_text));
  const int possible = libbpf_num_possible_cpus();
  if (possible <= 0) return LibbpfError(possible, "libbpf_num_possible_cpus");
  ASSIGN_OR_RETURN(const std::vector<int32_t> cpu_llc,
                   BuildCpuLlcTable(maps.llcs_in_use,
                                    static_cast<uint32_t>(possible), online));

  libbpf_set_print(PrintLibbpf);
  schedcache_scx_bpf* skeleton = schedcache_scx_bpf__open();
  if (skeleton == nullptr) return LibbpfError(errno, "opening the scheduler");
  std::unique_ptr<ScxScheduler> scheduler(new ScxScheduler(
      skeleton, Bounded(maps.meta_value.policy),
      static_cast<uint32_t>(maps.llcs_in_use.size()),
      static_cast<uint32_t>(possible)));
  skeleton->rodata->nr_cpus = scheduler->nr_cpus_;
  skeleton->rodata->nr_llcs = scheduler->nr_llcs_;
  skeleton->rodata->nr_online_cpus = static_cast<uint32_t>(online.size());
  for (size_t cpu = 0; cpu < cpu_llc.size(); ++cpu) {
    skeleton->rodata->cpu_llc[cpu] = cpu_llc[cpu];
  }
  // The mirror's maps themselves, never copies (docs/INTEGRATION.md).
  if (int error = bpf_map__reuse_fd(skeleton->maps.prefs, maps.prefs.get())) {
    return LibbpfError(error, "bpf_map__reuse_fd(prefs)");
  }
  if (int error = bpf_map__reuse_fd(skeleton->maps.llcs, maps.llcs.get())) {
    return LibbpfError(error, "bpf_map__reuse_fd(llcs)");
  }
  // ops.init creates the DSQs, which may sleep; libbpf 1.1 knows no
  // struct_ops.s sections, so the flag is set here.
  if (int error = bpf_program__set_flags(skeleton->progs.schedcache_init,
                                         BPF_F_SLEEPABLE)) {
    return LibbpfError(error, "bpf_program__set_flags(schedcache_init)");
  }
  if (int error = schedcache_scx_bpf__load(skeleton)) {
    return LibbpfError(error, "loading the scheduler");
  }
  scheduler->ring_ =
      ring_buffer__new(bpf_map__fd(skeleton->maps.latencies),
                       &ScxScheduler::OnLatency, scheduler.get(), nullptr);
  if (scheduler->ring_ == nullptr) {
    return LibbpfError(errno, "ring_buffer__new(latencies)");
  }
  scheduler->link_ = bpf_map__attach_struct_ops(skeleton->maps.schedcache_ops);
  if (scheduler->link_ == nullptr) {
    const int err = errno;
    if (err == EBUSY || err == EEXIST) {
      RETURN_IF_ERROR(CheckSchedExt(options.sched_ext_dir));
    }
    return LibbpfError(err, "registering the scheduler");
  }
  return scheduler;
}

ScxScheduler::ScxScheduler(schedcache_scx_bpf* skeleton, std::string policy,
                           uint32_t nr_llcs, uint32_t nr_cpus)
    : skeleton_(skeleton),
      policy_(std::move(policy)),
      nr_llcs_(nr_llcs),
      nr_cpus_(nr_cpus) {}

ScxScheduler::~ScxScheduler() {
  Stop();
  ring_buffer__free(ring_);
  schedcache_scx_bpf__destroy(skeleton_);
}

void ScxScheduler::Stop() {
  // libbpf 1.1's struct_ops link unregisters when destroyed.
  bpf_link__destroy(link_);
  link_ = nullptr;
}

int ScxScheduler::OnLatency(void* context, void* data, size_t size) {
  if (size < sizeof(schedcache_scx_latency)) return 0;
  schedcache_scx_latency record;
  std::memcpy(&record, data, sizeof(record));
  static_cast<ScxScheduler*>(context)->latencies_.Add(record);
  return 0;
}

absl::Status ScxScheduler::Poll() {
  const int consumed = ring_buffer__consume(ring_);
  if (consumed < 0) return LibbpfError(consumed, "ring_buffer__consume");
  // After Stop, ops.exit has run for our own unregistration.
  const schedcache_scx_exit& exit = skeleton_->bss->exit_info;
  if (link_ == nullptr || exit.kind == 0) return absl::OkStatus();
  return absl::AbortedError(absl::StrCat(
      "the kernel unregistered the scheduler (exit kind ", exit.kind,
      ", code ", exit.exit_code, "): ", Bounded(exit.reason),
      exit.msg[0] != '\0' ? absl::StrCat(": ", Bounded(exit.msg)) : ""));
}

absl::StatusOr<ScxCounters> ScxScheduler::Counters() const {
  std::vector<uint64_t> summed(SCHEDCACHE_SCX_NR_COUNTERS, 0);
  std::vector<uint64_t> per_cpu(nr_cpus_);
  for (uint32_t key = 0; key < SCHEDCACHE_SCX_NR_COUNTERS; ++key) {
    if (bpf_map_lookup_elem(bpf_map__fd(skeleton_->maps.counters), &key,
                            per_cpu.data()) != 0) {
      return absl::ErrnoToStatus(errno, "reading the counters");
    }
    for (const uint64_t value : per_cpu) summed[key] += value;
  }
  return CountersFromArray(summed);
}

}  // namespace schedcache
