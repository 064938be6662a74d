#include "eval/ab/batch_queue.h"

#include <optional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

TEST(BatchQueue, HandsOverBatchesInOrderAndDrainsAfterClose) {
  BatchQueue<int> queue(3);
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  ASSERT_TRUE(queue.Push(3));
  queue.Close();
  EXPECT_EQ(queue.Pop(), 1);
  EXPECT_EQ(queue.Pop(), 2);
  EXPECT_EQ(queue.Pop(), 3);
  EXPECT_EQ(queue.Pop(), std::nullopt);
  EXPECT_EQ(queue.Pop(), std::nullopt);  // stays ended
}

TEST(BatchQueue, AFastProducerNeverQueuesMoreThanTheCapacity) {
  constexpr int kBatches = 1000;
  BatchQueue<std::vector<int>> queue(2);
  std::thread producer([&queue] {
    for (int i = 0; i < kBatches; ++i) {
      // A batch of three values, so a batch is handed over whole.
      ASSERT_TRUE(queue.Push({i, i, i}));
    }
    queue.Close();
  });
  std::vector<int> popped;
  while (std::optional<std::vector<int>> batch = queue.Pop()) {
    ASSERT_THAT(*batch, ::testing::ElementsAre(batch->front(), batch->front(),
                                               batch->front()));
    popped.push_back(batch->front());
  }
  producer.join();
  ASSERT_EQ(popped.size(), static_cast<size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) EXPECT_EQ(popped[i], i);
  // Back-pressure: the producer waited whenever two batches were queued.
  EXPECT_LE(queue.most_queued(), 2u);
  EXPECT_GE(queue.most_queued(), 1u);
}

TEST(BatchQueue, CancelDropsWhatIsQueuedAndStopsBothSides) {
  BatchQueue<int> queue(2);
  ASSERT_TRUE(queue.Push(1));
  queue.Cancel();
  EXPECT_FALSE(queue.Push(2));
  EXPECT_EQ(queue.Pop(), std::nullopt);  // 1 was dropped
}

TEST(BatchQueue, CancelReleasesAProducerWaitingOnAFullQueue) {
  BatchQueue<int> queue(1);
  ASSERT_TRUE(queue.Push(1));
  bool second = true;
  // The second push waits for room (or finds the queue cancelled already):
  // either way it ends refused, once the consumer side cancels.
  std::thread producer([&queue, &second] { second = queue.Push(2); });
  queue.Cancel();
  producer.join();
  EXPECT_FALSE(second);
}

}  // namespace
}  // namespace schedcache::ab
