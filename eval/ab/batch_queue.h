// BatchQueue: a bounded first-in first-out hand-off of batches from one
// producer thread to one consumer thread, with back-pressure: Push waits
// while `capacity` batches are queued, so a fast producer (an input's reader)
// never gets further ahead of a slow consumer (the session) than that, and
// memory stays bounded whatever the stream's length.
//
// The producer ends the stream with Close (the consumer drains what is
// queued, then Pop returns nullopt); either side stops it early with Cancel
// (queued batches are dropped, Push returns false, Pop returns nullopt).
//
// Thread contract: thread-safe.
#ifndef SCHEDCACHE_EVAL_AB_BATCH_QUEUE_H_
#define SCHEDCACHE_EVAL_AB_BATCH_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace schedcache::ab {

template <typename Batch>
class BatchQueue {
 public:
  // `capacity` is the most batches queued at once (0 is taken as 1).
  explicit BatchQueue(size_t capacity)
      : capacity_(std::max<size_t>(capacity, 1)) {}

  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Push queues `batch`, waiting while the queue is full. Returns false,
  // dropping `batch`, when the queue was cancelled. REQUIRES: not Closed.
  bool Push(Batch batch) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &BatchQueue::HasRoomOrCancelled));
    if (cancelled_) return false;
    batches_.push_back(std::move(batch));
    most_queued_ = std::max(most_queued_, batches_.size());
    return true;
  }

  // Pop takes the oldest batch, waiting while none is queued and the queue
  // is open. Returns nullopt once the queue is closed and drained, or
  // cancelled.
  std::optional<Batch> Pop() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &BatchQueue::HasBatchOrEnded));
    if (cancelled_ || batches_.empty()) return std::nullopt;
    Batch batch = std::move(batches_.front());
    batches_.pop_front();
    return batch;
  }

  // Close says no batch will follow; the queued ones are still popped.
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

  // Cancel stops the hand-off from either side: queued batches are dropped.
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    batches_.clear();
  }

  // most_queued is the most batches the queue ever held at once (at most
  // the capacity).
  size_t most_queued() const {
    absl::MutexLock lock(&mu_);
    return most_queued_;
  }

 private:
  bool HasRoomOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || batches_.size() < capacity_;
  }
  bool HasBatchOrEnded() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || closed_ || !batches_.empty();
  }

  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::deque<Batch> batches_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  size_t most_queued_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_BATCH_QUEUE_H_
