#include "collector/kernel_decision_source.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/errno_status.h"
#include "common/status_macros.h"
#include "collector/kernel_decisions.h"
#include "kernel_decisions.skel.h"  // generated from kernel_decisions.bpf.c

namespace schedcache::host {
namespace {

// LibbpfMessages keeps libbpf's last messages while this library calls it,
// so an error can show what libbpf (and the verifier) said. libbpf's print
// hook is process-wide and takes no context: the buffer is one per
// process, used only under OpenSkeleton's call, which is not reentrant.
std::string& LibbpfMessages() {
  static std::string* const messages = new std::string();
  return *messages;
}

int CollectLibbpfMessage(libbpf_print_level level, const char* format,
                         va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[512];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  std::string& messages = LibbpfMessages();
  messages.append(line);
  constexpr size_t kKept = 2048;  // the tail: the verifier's verdict
  if (messages.size() > kKept) messages.erase(0, messages.size() - kKept);
  return n;
}

// LibbpfError is Internal naming the call, errno and libbpf's messages.
absl::Status LibbpfError(absl::string_view call, int error) {
  const absl::Status failed = ErrnoError(absl::StatusCode::kInternal,
                                         absl::StrCat(call, " failed"), error);
  std::string said(absl::StripTrailingAsciiWhitespace(LibbpfMessages()));
  if (said.empty()) return failed;
  return absl::Status(failed.code(),
                      absl::StrCat(failed.message(), "; libbpf said: ", said));
}

// kKernelEnotsupp is the kernel's internal ENOTSUPP (524), which bpf()
// returns for a trampoline the architecture or kernel does not provide.
constexpr int kKernelEnotsupp = 524;

uint64_t Mix(uint64_t z) {
  // splitmix64's finalizer: a bijection of 64 bits.
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

// JiffyEdge is the moment jiffies became `jiffies`.
struct JiffyEdge {
  int64_t jiffies = 0;
  int64_t at_ns = 0;
  schedcache_kclock_ctx probe{};  // the first run that saw it
};

absl::StatusOr<schedcache_kclock_ctx> RunClockProbe(int program_fd) {
  schedcache_kclock_ctx ctx{};
  LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ctx,
              .ctx_size_in = sizeof(ctx));
  if (bpf_prog_test_run_opts(program_fd, &opts) != 0) {
    return absl::InternalError(absl::StrCat(
        "BPF_PROG_TEST_RUN of kernel_clock_probe failed: ",
        std::strerror(errno)));
  }
  return ctx;
}

// NextEdge runs the probe until jiffies changes; the edge lies between
// the last run before and the first run after: its middle is taken.
absl::StatusOr<JiffyEdge> NextEdge(int program_fd) {
  ASSIGN_OR_RETURN(schedcache_kclock_ctx before, RunClockProbe(program_fd));
  const uint64_t give_up = before.now_ns + 1'000'000'000u;
  while (true) {
    ASSIGN_OR_RETURN(const schedcache_kclock_ctx now,
                     RunClockProbe(program_fd));
    if (now.jiffies != before.jiffies) {
      return JiffyEdge{static_cast<int64_t>(now.jiffies),
                       static_cast<int64_t>(before.now_ns +
                                            (now.now_ns - before.now_ns) / 2),
                       now};
    }
    if (now.now_ns > give_up) {
      return absl::FailedPreconditionError(absl::StrCat(
          "jiffies stayed at ", now.jiffies,
          " for a second of busy probing: no tick on this CPU"));
    }
    before = now;
  }
}

// ReadEpochPeriod reads llc_balancing/epoch_period under `debugfs`,
// mounting debugfs there first when it is not.
absl::StatusOr<int64_t> ReadEpochPeriod(const std::string& debugfs) {
  const std::string path =
      absl::StrCat(debugfs, "/sched/llc_balancing/epoch_period");
  std::ifstream in(path);
  if (!in && mount("debugfs", debugfs.c_str(), "debugfs", 0, nullptr) == 0) {
    in.open(path);
  }
  std::string text;
  int64_t period = 0;
  if (!in || !std::getline(in, text) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &period) ||
      period < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read the kernel's llc_epoch_period from '", path,
        "' (debugfs, CONFIG_SCHED_CACHE): ",
        in ? absl::StrCat("\"", text, "\" is not a positive number")
           : "absent"));
  }
  return period;
}

}  // namespace

KernelTick TickOfRecord(const schedcache_ktick_record& r) {
  KernelTick tick{.timestamp_ns = static_cast<int64_t>(r.timestamp_ns),
                  .cpu = r.cpu,
                  .tgid = r.tgid,
                  .tid = r.tid,
                  .jiffies = static_cast<int64_t>(r.jiffies)};
  // A node below -1 or a footprint past int64 is no value the kernel
  // keeps: unknown, as an absent field.
  if ((r.known & SCHEDCACHE_KTICK_NUMA_NID) != 0 &&
      r.numa_preferred_nid >= -1) {
    tick.numa_node = r.numa_preferred_nid;
  }
  constexpr uint64_t kMaxPages = std::numeric_limits<int64_t>::max();
  if ((r.known & SCHEDCACHE_KTICK_FOOTPRINT) != 0 && r.footprint <= kMaxPages) {
    tick.footprint_pages = static_cast<int64_t>(r.footprint);
  }
  return tick;
}

uint64_t HashGroup(uint64_t address, uint64_t key) {
  if (address == 0) return 0;
  // Two keyed rounds of a bijection: one XOR'd key alone would leave
  // address differences visible once the mix is undone.
  return Mix(Mix(address ^ key) + (key | 1));
}

int NearestHz(double ticks_per_second) {
  int best = 100;
  for (const int hz : {250, 300, 1000}) {
    if (std::fabs(ticks_per_second - hz) <
        std::fabs(ticks_per_second - best)) {
      best = hz;
    }
  }
  return best;
}

absl::Status CheckKernelDecisionSupport(const KernelSupportPaths& paths) {
  if (access(paths.btf.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel decisions need the kernel's BTF, and '", paths.btf, "' is ",
        errno == ENOENT ? "absent (a kernel built without CONFIG_DEBUG_INFO_BTF)"
                        : std::strerror(errno)));
  }
  btf* kernel = btf__parse(paths.btf.c_str(), nullptr);
  if (kernel == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read the kernel's BTF '", paths.btf,
                     "': ", std::strerror(errno)));
  }
  const int id =
      btf__find_by_name_kind(kernel, kKernelDecisionFunction, BTF_KIND_FUNC);
  btf__free(kernel);
  if (id < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the running kernel has no function ", kKernelDecisionFunction,
        " in its BTF (", paths.btf,
        "): it was built without CONFIG_SCHED_CACHE, so it makes no "
        "cache-aware decisions to record"));
  }
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(
        "kernel decisions need root (bpf(), and kallsyms for jiffies)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KernelDecisionSource>>
KernelDecisionSource::Open(const KernelSupportPaths& paths) {
  RETURN_IF_ERROR(CheckKernelDecisionSupport(paths));
  LibbpfMessages().clear();
  const libbpf_print_fn_t previous = libbpf_set_print(CollectLibbpfMessage);
  kernel_decisions_bpf* skeleton = kernel_decisions_bpf__open();
  absl::Status status;
  if (skeleton == nullptr) {
    status = LibbpfError("opening kernel_decisions.bpf.o", errno);
  } else if (const int error = kernel_decisions_bpf__load(skeleton);
             error != 0) {
    status = LibbpfError("loading kernel_decisions.bpf.o", -error);
  } else if (const int error = kernel_decisions_bpf__attach(skeleton);
             error != 0) {
    status = -error == kKernelEnotsupp || -error == EOPNOTSUPP
                 ? absl::FailedPreconditionError(absl::StrCat(
                       "the kernel refuses fentry/fexit on ",
                       kKernelDecisionFunction,
                       " (no BPF trampolines on this kernel or architecture)"))
                 : LibbpfError("attaching fentry/fexit to task_cache_work",
                               -error);
  }
  libbpf_set_print(previous);
  if (!status.ok()) {
    kernel_decisions_bpf__destroy(skeleton);
    return status;
  }
  std::random_device random;
  const uint64_t key = (uint64_t{random()} << 32) ^ random();
  std::unique_ptr<KernelDecisionSource> source(
      new KernelDecisionSource(skeleton, paths.debugfs, key));
  source->ring_ = ring_buffer__new(bpf_map__fd(skeleton->maps.decisions),
                                   &KernelDecisionSource::OnRecord,
                                   source.get(), nullptr);
  if (source->ring_ == nullptr) {
    return LibbpfError("ring_buffer__new on the decisions map", errno);
  }
  if (const int error = ring_buffer__add(
          source->ring_, bpf_map__fd(skeleton->maps.ticks),
          &KernelDecisionSource::OnTick, source.get());
      error != 0) {
    return LibbpfError("ring_buffer__add of the ticks map", -error);
  }
  return source;
}

KernelDecisionSource::KernelDecisionSource(kernel_decisions_bpf* skeleton,
                                           std::string debugfs, uint64_t key)
    : skeleton_(skeleton), debugfs_(std::move(debugfs)), key_(key) {}

KernelDecisionSource::~KernelDecisionSource() {
  ring_buffer__free(ring_);
  kernel_decisions_bpf__destroy(skeleton_);
}

int KernelDecisionSource::OnRecord(void* self, void* data, size_t size) {
  auto& source = *static_cast<KernelDecisionSource*>(self);
  if (size < sizeof(schedcache_kdec_record)) {
    ++source.bad_records_;
    return 0;
  }
  schedcache_kdec_record r;
  std::memcpy(&r, data, sizeof(r));
  source.pending_.decisions.push_back(KernelDecision{
      .timestamp_ns = static_cast<int64_t>(r.timestamp_ns),
      .cpu = r.cpu,
      .tgid = r.tgid,
      .tid = r.tid,
      .preferred_cpu = r.preferred_cpu,
      .scanned = r.scanned != 0,
      .nr_running_avg = static_cast<int64_t>(r.nr_running_avg),
      .footprint = static_cast<int64_t>(r.footprint),
      .group = HashGroup(r.group, source.key_),
      .jiffies = static_cast<int64_t>(r.jiffies),
      .group_epoch = static_cast<int64_t>(r.group_epoch),
      .next_scan = static_cast<int64_t>(r.next_scan),
      .cpu_epoch = static_cast<int64_t>(r.cpu_epoch),
      .cpu_epoch_next = static_cast<int64_t>(r.cpu_epoch_next)});
  ++source.decisions_;
  return 0;
}

int KernelDecisionSource::OnTick(void* self, void* data, size_t size) {
  auto& source = *static_cast<KernelDecisionSource*>(self);
  if (size < sizeof(schedcache_ktick_record)) {
    ++source.bad_records_;
    return 0;
  }
  schedcache_ktick_record r;
  std::memcpy(&r, data, sizeof(r));
  source.pending_.ticks.push_back(TickOfRecord(r));
  ++source.ticks_;
  return 0;
}

absl::StatusOr<KernelRecords> KernelDecisionSource::Consume() {
  if (const int consumed = ring_buffer__consume(ring_); consumed < 0) {
    return LibbpfError("ring_buffer__consume of the decisions and ticks",
                       -consumed);
  }
  return std::exchange(pending_, {});
}

absl::StatusOr<KernelDecisionTotals> KernelDecisionSource::Totals() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return LibbpfError("libbpf_num_possible_cpus", -cpus);
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus));
  KernelDecisionTotals totals{decisions_, ticks_, bad_records_};
  // Key 0: decisions lost; key 1: ticks (kernel_decisions.bpf.c).
  for (const uint32_t key : {0u, 1u}) {
    if (bpf_map_lookup_elem(bpf_map__fd(skeleton_->maps.lost), &key,
                            per_cpu.data()) != 0) {
      return LibbpfError("reading the lost counter map", errno);
    }
    for (const uint64_t lost : per_cpu) totals.lost += lost;
  }
  return totals;
}

absl::StatusOr<KernelClock> KernelDecisionSource::ReadClock() {
  const int probe = bpf_program__fd(skeleton_->progs.kernel_clock_probe);
  ASSIGN_OR_RETURN(const JiffyEdge first, NextEdge(probe));
  // Two edges ~500 ms apart give the tick rate to a few percent, enough to
  // tell 100, 250, 300 and 1000 apart even where ticks come late and
  // jiffies catch up several at a time (a guest under QEMU TCG: 30 ms
  // there read HZ 250 as 300; docs/LIVE.md).
  timespec pause{0, 500'000'000};
  nanosleep(&pause, nullptr);
  ASSIGN_OR_RETURN(const JiffyEdge second, NextEdge(probe));
  ASSIGN_OR_RETURN(const int64_t epoch_period, ReadEpochPeriod(debugfs_));
  const double seconds = static_cast<double>(second.at_ns - first.at_ns) / 1e9;
  KernelClock clock;
  clock.hz = NearestHz(seconds > 0 ? static_cast<double>(second.jiffies -
                                                         first.jiffies) /
                                         seconds
                                   : 0);
  clock.jiffies = second.jiffies;
  clock.at_ns = second.at_ns;
  clock.epoch_period = epoch_period;
  clock.cpu_epoch_next = static_cast<int64_t>(second.probe.cpu_epoch_next);
  return clock;
}

}  // namespace schedcache::host
