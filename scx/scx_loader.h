// ScxScheduler loads schedcache's sched_ext scheduler (schedcache_scx.bpf.c,
// embedded as a skeleton) on the pinned prefs and llcs maps of `schedcache
// mirror` and registers it with the kernel; destroying it unregisters it
// (docs/INTEGRATION.md, "schedcache-scx"). The schedcache-scx binary
// (scx_main.cc) is its command line.
//
// Thread contract: thread-compatible; one scheduler per machine (the
// kernel runs one sched_ext scheduler at a time).
#ifndef SCHEDCACHE_SCX_SCX_LOADER_H_
#define SCHEDCACHE_SCX_SCX_LOADER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "bpfmaps/schedcache_maps.h"
#include "scx/scx_summary.h"

struct schedcache_scx_bpf;  // the skeleton (schedcache_scx.skel.h)
struct ring_buffer;
struct bpf_link;

namespace schedcache {

struct ScxOptions {
  // The bpffs directory of the maps `schedcache mirror --pin-dir` writes.
  std::string pin_dir = {};
  // The kernel's sched_ext directory, and this process's effective uid:
  // what Start checks first (tests point them elsewhere).
  std::string sched_ext_dir = "/sys/kernel/sched_ext";
  uid_t euid = 0;
  // The online CPUs' list (/sys/devices/system/cpu/online).
  std::string online_cpus_file = "/sys/devices/system/cpu/online";
};

// CheckSchedExt returns OK when `dir` (/sys/kernel/sched_ext) exists and its
// state is "disabled"; FailedPrecondition saying this kernel has no
// sched_ext when `dir` is missing, or naming the scheduler that runs
// (root/ops) when the state is another.
absl::Status CheckSchedExt(const std::string& dir);

// ParseCpuList parses a kernel CPU list ("0-3,6"); InvalidArgument naming
// the text when it is not one.
absl::StatusOr<std::vector<uint32_t>> ParseCpuList(absl::string_view text);

// BuildCpuLlcTable returns, for each CPU id below `nr_cpus`, the dense id of
// its LLC in `llcs` (0 for an offline CPU in none). InvalidArgument when
// nr_cpus exceeds SCHEDCACHE_SCX_MAX_CPUS, an LLC names a CPU at or beyond
// nr_cpus, or an `online` CPU is in no LLC (the maps describe another
// machine), naming the CPU.
absl::StatusOr<std::vector<int32_t>> BuildCpuLlcTable(
    const std::vector<schedcache_llc>& llcs, uint32_t nr_cpus,
    absl::Span<const uint32_t> online);

class ScxScheduler {
 public:
  // Start refuses, each with FailedPrecondition (or NotFound for a map)
  // saying what is wrong, in this order: a kernel without sched_ext, a
  // non-root euid, a sched_ext scheduler already running, the pinned maps
  // missing or of another ABI (naming the file), no LLC in llcs. Then it
  // loads the scheduler on the pinned maps and registers it.
  static absl::StatusOr<std::unique_ptr<ScxScheduler>> Start(
      const ScxOptions& options);

  ScxScheduler(const ScxScheduler&) = delete;
  ScxScheduler& operator=(const ScxScheduler&) = delete;
  // Unregisters the scheduler (if Stop has not) and frees it.
  ~ScxScheduler();

  // Poll takes the latency records sent since the last call. Aborted with
  // the kernel's reason when the kernel has unregistered the scheduler
  // before Stop (an error, the watchdog, SysRq-S), else OK.
  absl::Status Poll();

  // Counters sums the scheduler's counters over CPUs.
  absl::StatusOr<ScxCounters> Counters() const;
  const LatencyLog& latencies() const { return latencies_; }

  // Stop unregisters the scheduler: its tasks go back to the fair class.
  void Stop();

  const std::string& policy() const { return policy_; }
  uint32_t nr_llcs() const { return nr_llcs_; }
  uint32_t nr_cpus() const { return nr_cpus_; }

 private:
  ScxScheduler(schedcache_scx_bpf* skeleton, std::string policy,
               uint32_t nr_llcs, uint32_t nr_cpus);
  static int OnLatency(void* context, void* data, size_t size);

  schedcache_scx_bpf* skeleton_;
  bpf_link* link_ = nullptr;
  ring_buffer* ring_ = nullptr;
  std::string policy_;
  uint32_t nr_llcs_;
  uint32_t nr_cpus_;
  LatencyLog latencies_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SCX_SCX_LOADER_H_
