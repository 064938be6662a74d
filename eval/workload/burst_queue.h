// BurstQueue: the simulator's pending burst ends, earliest first (ties in
// the order they were pushed, by their unique sequence number), as a binary
// min-heap. Beyond a priority queue it can replace its top in one sift-down:
// the simulator pops a burst end and, in the callback that handles it, most
// often starts the next burst, so the pair costs one pass over the heap
// instead of two. Any valid heap yields the same order, since (time, seq)
// is a total order: replacing the top changes no result.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVAL_WORKLOAD_BURST_QUEUE_H_
#define SCHEDCACHE_EVAL_WORKLOAD_BURST_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace schedcache {

struct BurstEnd {
  int64_t time_ns;
  uint64_t seq;  // unique, increasing with each burst started
  int thread;
};

class BurstQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // REQUIRES for Top, Pop and ReplaceTop: !empty().
  const BurstEnd& Top() const { return heap_.front(); }

  void Push(const BurstEnd& burst) {
    heap_.push_back(burst);
    SiftUp(heap_.size() - 1);
  }
  void Pop() {
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0);
  }
  // ReplaceTop is Pop then Push(burst), in one sift-down.
  void ReplaceTop(const BurstEnd& burst) {
    heap_.front() = burst;
    SiftDown(0);
  }

 private:
  static bool Before(const BurstEnd& a, const BurstEnd& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.seq < b.seq;
  }
  void SiftUp(size_t i) {
    const BurstEnd moving = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!Before(moving, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = moving;
  }
  void SiftDown(size_t i) {
    const BurstEnd moving = heap_[i];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
      if (!Before(heap_[child], moving)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = moving;
  }

  std::vector<BurstEnd> heap_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_WORKLOAD_BURST_QUEUE_H_
