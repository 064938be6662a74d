// Measures the per-process state of each cache-aware policy for a process
// that ran on 16 CPUs of the 384-CPU EPYC topology, with a counting
// allocator: every byte the policy asks the heap for is counted.
#include <cstdio>
#include <cstdlib>
#include <new>

#include "gtest/gtest.h"
#include "policies/cache_aware_policy.h"
#include "policies/testing/test_topologies.h"

namespace {

// Live heap bytes requested through operator new in this binary. A header
// in front of each block keeps the size for operator delete.
int64_t g_live_bytes = 0;
constexpr size_t kHeader = alignof(std::max_align_t);

void* CountedNew(size_t size) {
  void* block = std::malloc(size + kHeader);
  if (block == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(block) = size;
  g_live_bytes += static_cast<int64_t>(size);
  return static_cast<char*>(block) + kHeader;
}

void CountedDelete(void* p) {
  if (p == nullptr) return;
  void* block = static_cast<char*>(p) - kHeader;
  g_live_bytes -= static_cast<int64_t>(*static_cast<size_t*>(block));
  std::free(block);
}

}  // namespace

void* operator new(size_t size) { return CountedNew(size); }
void* operator new[](size_t size) { return CountedNew(size); }
void operator delete(void* p) noexcept { CountedDelete(p); }
void operator delete[](void* p) noexcept { CountedDelete(p); }
void operator delete(void* p, size_t) noexcept { CountedDelete(p); }
void operator delete[](void* p, size_t) noexcept { CountedDelete(p); }

namespace schedcache {
namespace {

constexpr int kProcesses = 256;
// docs/PERFORMANCE.md target: at most 1 KiB per tracked process per policy.
constexpr int64_t kBudgetBytes = 1024;

// BytesPerProcess feeds kProcesses processes, each running on 16 CPUs,
// then scanning once (so the evidence
// of the scan is stored too), and returns the heap bytes per process plus
// sizeof(MmState), the slot each process holds in the policy's vector.
int64_t BytesPerProcess(ScanScope scope) {
  ModelContext context(test_support::MakeEpyc384(), ModelTunables{});
  context.Start(0);
  CacheAwarePolicy policy(context, scope);
  // Both SMT threads of 4 cores in LLC 0 (socket 0: CPUs 0-3, 192-195) and
  // of 4 cores in LLC 12 (socket 1: CPUs 100-103, 292-295).
  constexpr int kCpus[16] = {0,   1,   2,   3,   100, 101, 102, 103,
                             192, 193, 194, 195, 292, 293, 294, 295};
  auto run = [&](uint32_t slot, int64_t now) {
    const ProcessRef process{slot, static_cast<int32_t>(slot + 1), 4, 0};
    for (int cpu : kCpus) {
      context.Advance(cpu, now);
      policy.Account(process, ThreadRef{1, -1, cpu}, 1000, now);
      context.mutable_rq(cpu).cpu_runtime += 1000;
    }
    policy.Scan(process, ThreadRef{1, -1, 0}, now);
  };
  // Warm up: size the policy's slot vector and its scratch masks, so what
  // follows counts only per-process allocations.
  run(kProcesses, 0);
  const int64_t before = g_live_bytes;
  for (uint32_t slot = 0; slot < kProcesses; ++slot) run(slot, 0);
  const int64_t heap = (g_live_bytes - before) / kProcesses;
  EXPECT_EQ(policy.mm(0).cpus.size(), 16u);
  return heap + static_cast<int64_t>(sizeof(MmState));
}

TEST(PolicyMemory, FullScanStaysUnderOneKibPerProcess) {
  const int64_t bytes = BytesPerProcess(ScanScope::kAllCpus);
  std::printf("full-scan: %lld bytes per process (16 of 384 CPUs, 24 LLCs "
              "examined, 2 occupied)\n",
              static_cast<long long>(bytes));
  EXPECT_LE(bytes, kBudgetBytes);
}

TEST(PolicyMemory, VisitedScanStaysUnderOneKibPerProcess) {
  const int64_t bytes = BytesPerProcess(ScanScope::kVisitedCpus);
  std::printf("visited-scan: %lld bytes per process (16 of 384 CPUs)\n",
              static_cast<long long>(bytes));
  EXPECT_LE(bytes, kBudgetBytes);
}

}  // namespace
}  // namespace schedcache
