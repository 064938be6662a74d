#include "eval/workload/burst_queue.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

// Drain pops everything, returning the sequence numbers in pop order.
std::vector<uint64_t> Drain(BurstQueue& queue) {
  std::vector<uint64_t> order;
  while (!queue.empty()) {
    order.push_back(queue.Top().seq);
    queue.Pop();
  }
  return order;
}

TEST(BurstQueue, PopsEarliestFirstAndTiesInPushOrder) {
  BurstQueue queue;
  queue.Push({30, 0, 7});
  queue.Push({10, 1, 8});
  queue.Push({30, 2, 9});  // same time as seq 0: after it
  queue.Push({20, 3, 10});
  EXPECT_EQ(queue.Top().thread, 8);
  EXPECT_EQ(Drain(queue), (std::vector<uint64_t>{1, 3, 0, 2}));
}

TEST(BurstQueue, ReplaceTopDropsTheTopAndFilesTheNewBurst) {
  BurstQueue queue;
  queue.Push({10, 0, 1});
  queue.Push({20, 1, 2});
  queue.Push({40, 2, 3});
  queue.ReplaceTop({30, 3, 4});  // 10 leaves; 30 goes between 20 and 40
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(Drain(queue), (std::vector<uint64_t>{1, 3, 2}));
}

// Random pushes, pops and replacements against a sorted reference: the
// heap's order is exactly (time, seq).
TEST(BurstQueue, MatchesASortedReferenceUnderRandomUse) {
  std::mt19937_64 random(42);
  BurstQueue queue;
  std::vector<BurstEnd> reference;
  const auto later = [](const BurstEnd& a, const BurstEnd& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
  };
  uint64_t seq = 0;
  for (int step = 0; step < 20'000; ++step) {
    // Few distinct times, so ties are common.
    const BurstEnd burst{static_cast<int64_t>(random() % 50), seq++, step};
    const uint64_t op = random() % 3;
    if (op == 0 || reference.empty()) {
      queue.Push(burst);
      reference.push_back(burst);
    } else {
      std::sort(reference.begin(), reference.end(), later);  // earliest last
      ASSERT_EQ(queue.Top().seq, reference.back().seq) << "step " << step;
      reference.pop_back();
      if (op == 1) {
        queue.Pop();
      } else {
        queue.ReplaceTop(burst);
        reference.push_back(burst);
      }
    }
    ASSERT_EQ(queue.size(), reference.size());
  }
}

}  // namespace
}  // namespace schedcache
