// ProcessTable: process slots, thread handles (and the tid table that
// guesses them), current-thread bookkeeping, removal and the
// least-recently-active order.
#include "policies/process_table.h"

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "gtest/gtest.h"
#include "policies/testing/test_topologies.h"

namespace schedcache {
namespace {

constexpr int kCpus = 4;  // for tables that switch no thread in

TEST(ProcessTable, OneThreadLookupResolvesProcessAndThread) {
  ProcessTable table(kCpus, 8);
  const ProcessTable::Admission first = table.Admit(10, 11, 0);
  EXPECT_NE(first.slot, ProcessTable::kNoSlot);
  const ProcessTable::Admission again = table.Admit(10, 11, 0);
  EXPECT_EQ(again.slot, first.slot);
  EXPECT_EQ(again.thread, first.thread);
  const ProcessTable::Admission sibling = table.Admit(10, 12, 0);
  EXPECT_EQ(sibling.slot, first.slot);
  EXPECT_NE(sibling.thread, first.thread);
  EXPECT_EQ(table.thread(sibling.thread).tid, 12);
  table.NoteSample(first.slot, first.thread, 0, 0);
  table.NoteSample(sibling.slot, sibling.thread, 0, 0);
  table.NoteSample(first.slot, first.thread, 0, 0);  // counted once
  EXPECT_EQ(table.RefOf(first.slot).nr_threads, 2);
  EXPECT_EQ(table.size(), 1u);
}

TEST(ProcessTable, AProcessStartsAtItsFirstSampleNotItsFirstHandOver) {
  // Admitted by hand-overs of two threads, process 10 is not tracked and
  // counts no threads; a sample of one thread starts it at that sample's
  // epoch (3) and counts that thread alone.
  ProcessTable table(kCpus, 8);
  const ProcessTable::Admission a = table.Admit(10, 11, 0);
  table.Admit(10, 12, 0);
  EXPECT_EQ(table.Find(10), ProcessTable::kNoSlot);
  EXPECT_EQ(table.size(), 0u);
  table.NoteSample(a.slot, a.thread, 3, 0);
  EXPECT_EQ(table.Find(10), a.slot);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.RefOf(a.slot).nr_threads, 1);
  EXPECT_EQ(table.RefOf(a.slot).epoch, 3);
  table.NoteSample(a.slot, a.thread, 7, 0);  // a later sample: epoch stays
  EXPECT_EQ(table.RefOf(a.slot).epoch, 3);
}

TEST(ProcessTable, TidsSharingATableEntryStayApart) {
  // 7 and 7 + 4096 share an entry of the tid table; the same tid in two
  // processes shares it too. Each guess is checked, so none is mixed up.
  ProcessTable table(kCpus, 8);
  const ProcessTable::Admission a = table.Admit(1, 7, 0);
  const ProcessTable::Admission b = table.Admit(2, 7 + 4096, 0);
  const ProcessTable::Admission c = table.Admit(3, 7, 0);
  EXPECT_NE(a.slot, b.slot);
  EXPECT_NE(a.slot, c.slot);
  EXPECT_NE(a.thread, c.thread);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(table.Admit(1, 7, 0).thread, a.thread);
    EXPECT_EQ(table.Admit(2, 7 + 4096, 0).thread, b.thread);
    EXPECT_EQ(table.Admit(3, 7, 0).thread, c.thread);
  }
  EXPECT_EQ(table.thread(b.thread).tgid, 2);
  EXPECT_EQ(table.thread(c.thread).slot, c.slot);
}

TEST(ProcessTable, AFullTableAdmitsNoNewProcessUntilOneIsRemoved) {
  ModelContext context(test_support::MakeGrid({1, 2, 4}), ModelTunables{});
  ProcessTable table(context.num_cpu_slots(), 2);
  // Admit and sample, as the engine does for a runtime sample.
  auto sample = [&table](int32_t tgid, int32_t tid) {
    const ProcessTable::Admission admission = table.Admit(tgid, tid, 0);
    if (admission.slot != ProcessTable::kNoSlot) {
      table.NoteSample(admission.slot, admission.thread, 0, 0);
    }
    return admission;
  };
  const ProcessTable::Admission one = sample(1, 100);
  const ProcessTable::Admission two = sample(2, 200);
  sample(1, 101);  // process 1 most recently active
  EXPECT_EQ(sample(3, 300).slot, ProcessTable::kNoSlot);
  EXPECT_NE(sample(2, 202).slot, ProcessTable::kNoSlot);  // known: a thread
  sample(1, 100);
  EXPECT_EQ(table.least_recently_sampled(), two.slot);
  table.Remove(two.slot, context);
  EXPECT_EQ(table.Find(2), ProcessTable::kNoSlot);
  EXPECT_EQ(table.FindRecord(2), ProcessTable::kNoSlot);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.least_recently_sampled(), one.slot);
  // Process 3 takes the freed slot, with no threads but the one named.
  const ProcessTable::Admission three = sample(3, 300);
  EXPECT_EQ(three.slot, two.slot);
  EXPECT_EQ(table.FindThread(three.slot, 200), nullptr);
  EXPECT_EQ(table.FindThread(three.slot, 202), nullptr);
  ASSERT_NE(table.FindThread(three.slot, 300), nullptr);
  EXPECT_EQ(table.RefOf(three.slot).nr_threads, 1);
  // Process 2 comes back as new: its old thread's guess no longer matches.
  table.Remove(one.slot, context);
  const ProcessTable::Admission back = sample(2, 200);
  EXPECT_EQ(back.slot, one.slot);
  EXPECT_EQ(table.FindThread(back.slot, 202), nullptr);
  EXPECT_EQ(table.RefOf(back.slot).nr_threads, 1);
}

// CurrentThreads: threads 6 and 7 of process 5 and thread 9 of process 8,
// admitted (by hand-overs: no process is started) on 2 LLCs of 4 CPUs, for
// the tests of which thread is current where.
class CurrentThreads : public ::testing::Test {
 protected:
  ModelContext context{test_support::MakeGrid({1, 2, 4}), ModelTunables{}};
  ProcessTable table{context.num_cpu_slots(), 8};
  const ProcessTable::Admission a = table.Admit(5, 6, 0);
  const ProcessTable::Admission b = table.Admit(5, 7, 0);
  const ProcessTable::Admission other = table.Admit(8, 9, 0);
};

TEST_F(CurrentThreads, RemovingAProcessClearsOnlyTheCpusItsThreadsAreCurrentOn) {
  table.SwitchIn(a.slot, a.thread, 0, context);
  table.SwitchIn(b.slot, b.thread, 1, context);
  table.SwitchIn(other.slot, other.thread, 1, context);  // took CPU 1 over
  table.Remove(a.slot, context);
  EXPECT_EQ(context.rq(0).curr_group, RqState::kNoGroup);
  EXPECT_EQ(context.rq(0).curr_tid, 0);
  EXPECT_EQ(context.rq(1).curr_group, other.slot);
  EXPECT_EQ(context.rq(1).curr_tid, 9);
  // Not started (hand-overs only), yet its record is gone.
  EXPECT_EQ(table.FindRecord(5), ProcessTable::kNoSlot);
}

TEST_F(CurrentThreads, AThreadIsCurrentOnOneCpuAtATime) {
  table.SwitchIn(a.slot, a.thread, 0, context);
  EXPECT_EQ(context.rq(0).curr_group, a.slot);
  EXPECT_EQ(context.rq(0).curr_tid, 6);
  table.SwitchIn(a.slot, a.thread, 0, context);  // again on the same CPU
  EXPECT_EQ(context.rq(0).curr_tid, 6);
  ThreadState& moved = table.SwitchIn(a.slot, a.thread, 3, context);
  EXPECT_EQ(moved.cpu, 3);
  EXPECT_EQ(context.rq(0).curr_group, RqState::kNoGroup);
  EXPECT_EQ(context.rq(0).curr_tid, 0);
  EXPECT_EQ(context.rq(3).curr_tid, 6);
  // A CPU that another thread took over since is left alone.
  table.SwitchIn(b.slot, b.thread, 3, context);
  table.SwitchIn(a.slot, a.thread, 1, context);
  EXPECT_EQ(context.rq(3).curr_tid, 7);
  EXPECT_EQ(context.rq(1).curr_tid, 6);
  EXPECT_EQ(table.process(a.slot).last_tid, 6);
}

TEST_F(CurrentThreads, ASwitchedOutThreadLeavesItsCpuToTheNextOne) {
  // Thread 6 runs on CPU 0 and is switched out; thread 7 takes CPU 0.
  // When 6 comes back on CPU 2, CPU 0 keeps 7: 6 stopped being current
  // there at its switch-out. Removing process 5 then leaves CPU 0 to 8,
  // which took it over, and empties CPU 2.
  table.SwitchIn(a.slot, a.thread, 0, context);
  table.SwitchOut(0, context);
  EXPECT_EQ(context.rq(0).curr_group, RqState::kNoGroup);
  EXPECT_EQ(context.rq(0).curr_tid, 0);
  EXPECT_FALSE(table.thread(a.thread).current);
  table.SwitchIn(b.slot, b.thread, 0, context);
  table.SwitchIn(a.slot, a.thread, 2, context);
  EXPECT_EQ(context.rq(0).curr_tid, 7);
  EXPECT_EQ(context.rq(2).curr_tid, 6);
  table.SwitchIn(other.slot, other.thread, 0, context);
  EXPECT_FALSE(table.thread(b.thread).current);
  table.Remove(a.slot, context);
  EXPECT_EQ(context.rq(0).curr_group, other.slot);
  EXPECT_EQ(context.rq(0).curr_tid, 9);
  EXPECT_EQ(context.rq(2).curr_group, RqState::kNoGroup);
  EXPECT_EQ(context.rq(2).curr_tid, 0);
  // The CPU freed with process 5 takes a new thread as any other.
  const ProcessTable::Admission next = table.Admit(10, 11, 0);
  table.SwitchIn(next.slot, next.thread, 2, context);
  EXPECT_EQ(context.rq(2).curr_tid, 11);
  EXPECT_EQ(context.rq(0).curr_tid, 9);
}

TEST(ProcessTable, EvictsInTheExactOrderOfTheLastSampleThoughItMovesLazily) {
  // A reference keeps each slot's position in the order of samples and
  // admissions; the table, which moves a process at most once per 5 ns
  // period, must name the same least recently sampled process after every
  // event, on a seeded stream of samples, hand-overs (admissions only) and
  // removals, time advancing 0-3 ns per event.
  ModelContext context(test_support::MakeGrid({1, 2, 4}), ModelTunables{});
  ProcessTable table(context.num_cpu_slots(), 6, /*touch_period_ns=*/5);
  std::mt19937 random(16);
  std::map<uint32_t, uint64_t> order;  // slot -> last sample or admission
  uint64_t events = 0;
  int64_t now = 0;
  auto oldest = [&order] {
    return std::min_element(order.begin(), order.end(),
                            [](const auto& a, const auto& b) {
                              return a.second < b.second;
                            })
        ->first;
  };
  for (int i = 0; i < 5000; ++i) {
    now += static_cast<int64_t>(random() % 4);
    const int32_t tgid = 1 + static_cast<int32_t>(random() % 10);
    if (random() % 10 == 0 && !order.empty()) {
      const uint32_t slot = oldest();
      ASSERT_EQ(table.least_recently_sampled(), slot) << "event " << i;
      table.Remove(slot, context);
      order.erase(slot);
      continue;
    }
    const bool known = table.FindRecord(tgid) != ProcessTable::kNoSlot;
    ProcessTable::Admission admission = table.Admit(tgid, tgid, now);
    if (admission.slot == ProcessTable::kNoSlot) {
      const uint32_t slot = oldest();
      ASSERT_EQ(table.least_recently_sampled(), slot) << "event " << i;
      table.Remove(slot, context);
      order.erase(slot);
      admission = table.Admit(tgid, tgid, now);
    }
    if (!known) order[admission.slot] = ++events;
    if (random() % 2 == 0) {
      table.NoteSample(admission.slot, admission.thread, 0, now);
      order[admission.slot] = ++events;
    }
    ASSERT_EQ(table.least_recently_sampled(), oldest()) << "event " << i;
  }
}

}  // namespace
}  // namespace schedcache
