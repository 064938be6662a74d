// A process that moves over every CPU of the machine keeps only the CPU
// entries that can still matter (KernelModel::DropSpentEntries), and scans
// the way the kernel's dense per-CPU state (one entry per CPU, from the
// mm's start) says.
#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "gtest/gtest.h"
#include "policies/kernel_model.h"
#include "policies/model_context.h"
#include "policies/testing/test_topologies.h"

namespace schedcache {
namespace {

// DenseEntries is the kernel's per-CPU state of one mm: an entry for every
// CPU, never dropped.
class DenseEntries {
 public:
  explicit DenseEntries(const ModelContext& context)
      : context_(context), entries_(context.num_cpu_slots()) {}

  void Account(int cpu, uint64_t delta_ns) {
    CatchUpEntry(context_.rq(cpu), entries_[cpu]);
    entries_[cpu].runtime += delta_ns;
  }
  // Occupancy is fraction_mm_sched of `cpu` (its rq already advanced).
  uint64_t Occupancy(int cpu) {
    CatchUpEntry(context_.rq(cpu), entries_[cpu]);
    return OccupancyRatio(entries_[cpu].runtime, context_.rq(cpu).cpu_runtime);
  }

 private:
  const ModelContext& context_;
  std::vector<CpuEntry> entries_;  // epoch 0: the session starts at t = 0
};

constexpr int kCpus = 384;
// The default epoch period, jiffies (HZ 250 / 100); the model's `now` is
// a jiffy.
constexpr int64_t kPeriod = 2;
constexpr uint64_t kRunNs = 1'000'000;

// Tour runs the process 1 ms on CPU 7 * step (mod 384) every half epoch,
// so it comes to each of the 384 CPUs in turn, LLC after LLC, while every
// CPU keeps busy with other work (its epoch advances); it scans once an
// epoch and checks each scan's evidence against the dense state with
// `expected` (context, dense state, the scanned mm, its evidence). It
// returns the most CPU entries the process held.
template <typename Expected>
size_t Tour(ScanScope scope, const Expected& expected) {
  ModelContext context(test_support::MakeEpyc384(), ModelTunables{});
  context.Start(0);
  KernelModel model(context, scope);
  MmState mm;
  DenseEntries dense(context);
  const ProcessRef process{0, 7, 4, 0};
  size_t most_entries = 0;
  for (int step = 0; step < 4 * kCpus; ++step) {
    const int64_t now = step * kPeriod / 2;
    for (int cpu = 0; cpu < kCpus; ++cpu) {
      context.Advance(cpu, now);
      context.mutable_rq(cpu).cpu_runtime += kRunNs;
    }
    const int cpu = 7 * step % kCpus;
    model.Account(mm, process, cpu, kRunNs);
    dense.Account(cpu, kRunNs);
    context.mutable_rq(cpu).cpu_runtime += kRunNs;
    most_entries = std::max(most_entries, mm.cpus.size());
    if (step % 2 != 0) continue;
    EXPECT_EQ(model.Scan(mm, process, ThreadRef{1, -1, cpu}, now).kind,
              ScanOutcome::Kind::kExecuted);
    expected(context, dense, mm, model.Evidence(mm));
  }
  return most_entries;
}

TEST(SpentEntries, FullScanKeepsOnlyWhatHasNotDecayedAndScansAsTheKernel) {
  const size_t most_entries = Tour(
      ScanScope::kAllCpus,
      [](const ModelContext& context, DenseEntries& dense, const MmState&,
         const std::vector<LlcOccupancy>& evidence) {
        ASSERT_EQ(evidence.size(), 24u);  // every LLC of the machine
        std::map<int, uint64_t> by_llc;
        for (int cpu = 0; cpu < kCpus; ++cpu) {
          by_llc[context.llc_of(cpu)] += dense.Occupancy(cpu);
        }
        for (const LlcOccupancy& llc : evidence) {
          EXPECT_EQ(llc.occupancy, by_llc[llc.llc]) << "LLC " << llc.llc;
        }
      });
  // 1 ms decays to 0 in 20 halvings, i.e. 20 epochs: about 40 CPUs of the
  // tour still hold runtime, not the 384 it ran on.
  EXPECT_LE(most_entries, 48u);
}

TEST(SpentEntries, VisitedScanKeepsOnlyWhatHasNotDecayedAndScansAsTheKernel) {
  const size_t most_entries = Tour(
      ScanScope::kVisitedCpus,
      [](const ModelContext& context, DenseEntries& dense, const MmState& mm,
         const std::vector<LlcOccupancy>& evidence) {
        // Each LLC it examined sums the dense occupancy of its visited CPUs
        // (those that did not time out in the scan).
        ASSERT_FALSE(evidence.empty());
        std::map<int, uint64_t> by_llc;
        for (const uint32_t index : mm.visited_entries) {
          const int cpu = mm.cpus[index].cpu;
          by_llc[context.llc_of(cpu)] += dense.Occupancy(cpu);
        }
        for (const LlcOccupancy& llc : evidence) {
          EXPECT_EQ(llc.occupancy, by_llc[llc.llc]) << "LLC " << llc.llc;
        }
      });
  EXPECT_LE(most_entries, 48u);
}

}  // namespace
}  // namespace schedcache
