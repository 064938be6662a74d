// KernelDecisionSource captures the running kernel's own cache-aware
// decisions (CONFIG_SCHED_CACHE): collector/kernel_decisions.bpf.c, embedded in
// this library by `bpftool gen skeleton`, follows every return of the
// kernel's task_cache_work and hands records to userspace through a BPF
// ring buffer (docs/LIVE.md, Kernel decisions).
//
// Before loading anything, Open says exactly what a kernel lacks
// (CheckKernelDecisionSupport). Group addresses never leave this class:
// each is hashed with a key drawn per source, so a capture names groups
// without naming kernel memory.
//
// Thread contract: thread-compatible; one reader.
#ifndef SCHEDCACHE_COLLECTOR_KERNEL_DECISION_SOURCE_H_
#define SCHEDCACHE_COLLECTOR_KERNEL_DECISION_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "events/event.h"

struct kernel_decisions_bpf;
struct ring_buffer;
struct schedcache_ktick_record;

namespace schedcache::host {

// KernelSupportPaths are the files CheckKernelDecisionSupport reads; tests
// point them elsewhere.
struct KernelSupportPaths {
  std::string btf = "/sys/kernel/btf/vmlinux";
  // The kernel's llc_epoch_period (debugfs, mounted on demand).
  std::string debugfs = "/sys/kernel/debug";
};

// kKernelDecisionFunction is the kernel function followed.
inline constexpr char kKernelDecisionFunction[] = "task_cache_work";

// CheckKernelDecisionSupport returns FailedPrecondition saying what is
// missing for a capture of kernel decisions, in this order: the kernel's
// BTF (`paths.btf` absent or unreadable), task_cache_work in it (a kernel
// without SCHED_CACHE), root (euid 0, for bpf() and kallsyms addresses).
absl::Status CheckKernelDecisionSupport(const KernelSupportPaths& paths = {});

// KernelDecisionTotals: what the source has delivered and lost.
struct KernelDecisionTotals {
  uint64_t decisions = 0;
  uint64_t ticks = 0;
  // ring-buffer reservations (decisions and ticks) that failed in the kernel
  uint64_t lost = 0;
};

// KernelRecords: what one Consume read of the two ring buffers.
struct KernelRecords {
  std::vector<KernelDecision> decisions;
  std::vector<KernelTick> ticks;
};

class KernelDecisionSource {
 public:
  // Open checks support, loads the programs and attaches them. Returns
  // CheckKernelDecisionSupport's errors, FailedPrecondition when the
  // kernel refuses the fentry/fexit attachment (no BPF trampolines), or
  // Internal naming the libbpf call, errno and libbpf's last messages.
  static absl::StatusOr<std::unique_ptr<KernelDecisionSource>> Open(
      const KernelSupportPaths& paths = {});
  ~KernelDecisionSource();  // detaches and unloads
  KernelDecisionSource(const KernelDecisionSource&) = delete;
  KernelDecisionSource& operator=(const KernelDecisionSource&) = delete;

  // ReadClock measures the kernel's tick clock (events/event.h
  // KernelClock): busy-runs the clock probe across two jiffy edges about
  // 500 ms apart; HZ is the nearest of 100, 250, 300, 1000 to the measured
  // rate; epoch_period comes from debugfs. Takes ~0.5 s. Returns
  // Internal when the probe fails, FailedPrecondition when debugfs lacks
  // llc_balancing/epoch_period or jiffies does not move for a second.
  absl::StatusOr<KernelClock> ReadClock();

  // Consume returns the decisions and ticks the ring buffers hold, each in
  // the order the kernel committed them (per CPU in time order; not merged
  // across CPUs).
  absl::StatusOr<KernelRecords> Consume();

  // Totals reads the kernel's loss counters. Returns Internal when the
  // counter map cannot be read.
  absl::StatusOr<KernelDecisionTotals> Totals() const;

 private:
  KernelDecisionSource(kernel_decisions_bpf* skeleton, std::string debugfs,
                       uint64_t key);
  // OnRecord turns one record into a decision, OnTick into a tick (called
  // by the ring buffer).
  static int OnRecord(void* self, void* data, size_t size);
  static int OnTick(void* self, void* data, size_t size);

  kernel_decisions_bpf* skeleton_;
  ring_buffer* ring_ = nullptr;
  const std::string debugfs_;
  const uint64_t key_;  // the group hash key of this capture
  KernelRecords pending_;
  uint64_t decisions_ = 0;
  uint64_t ticks_ = 0;
  uint64_t bad_records_ = 0;  // wrong size: counted with the lost
};

// HashGroup maps a kernel group address to its capture identity with
// `key`: 0 stays 0 (no group), distinct addresses stay distinct (a
// bijection of 64 bits), and without the key the address cannot be had
// back. Exposed for tests.
uint64_t HashGroup(uint64_t address, uint64_t key);

// TickOfRecord turns one tick record of kernel_decisions.bpf.c into a
// tick: a NUMA attribute the record does not mark known stays unknown
// (KernelTick's kUnchanged* values). Exposed for tests.
KernelTick TickOfRecord(const schedcache_ktick_record& record);

// NearestHz returns the one of 100, 250, 300, 1000 nearest to
// `ticks_per_second`. Exposed for tests.
int NearestHz(double ticks_per_second);

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_KERNEL_DECISION_SOURCE_H_
