// Seeded random sample streams for policy tests. Deterministic for a seed.
#ifndef SCHEDCACHE_POLICIES_TESTING_RANDOM_STREAMS_H_
#define SCHEDCACHE_POLICIES_TESTING_RANDOM_STREAMS_H_

#include <cstdint>
#include <variant>
#include <vector>

#include "events/event.h"
#include "topology/topology.h"

namespace schedcache::test_support {

// StreamEvent is a sample, a hand-over, or a scan request for a thread.
struct ScanRequest {
  int64_t timestamp_ns;
  int32_t tgid;
  int32_t tid;
};
using StreamEvent = std::variant<Sample, HandOver, ScanRequest>;

struct StreamShape {
  uint64_t seed = 1;
  int processes = 6;
  int steps = 400;                    // each step is a quarter epoch
  // The epoch the steps are cut from: the model's default, HZ 250's 2
  // jiffies of 4 ms.
  int64_t epoch_ns = 8'000'000;
  // revisit: every CPU a process ever used runs it again every step, so no
  // CPU stays unvisited for longer than the timeout. Otherwise processes
  // wander over random CPUs and sleep for random stretches.
  bool revisit = true;
  bool numa_nodes = false;            // give threads random preferred nodes
  bool hand_overs = false;            // mix in hand-overs (incl. idle)
  bool scan_requests = false;         // mix in scan requests
};

// RandomStream makes a stream over `topology`'s online CPUs with
// non-decreasing timestamps.
std::vector<StreamEvent> RandomStream(const Topology& topology,
                                      const StreamShape& shape);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_POLICIES_TESTING_RANDOM_STREAMS_H_
