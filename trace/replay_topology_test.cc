// What replay does with a capture's machine-specific values when the
// topology it replays on is another machine's (docs/MODEL.md, The model
// against the running kernel).
#include <string>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

// Four CPUs, one LLC each; CPU c is on node nodes[c].
Topology FourCpus(const std::vector<int>& nodes) {
  TopologySpec spec;
  spec.source = "test";
  for (int cpu = 0; cpu < 4; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu, 0, nodes[cpu]});
    CacheSpec llc;
    llc.cpus.Set(cpu);
    spec.llcs.push_back(llc);
  }
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *std::move(topology);
}

// Thread 11 switches in on CPU 0 at 0 ms; the kernel ticks it at 1.5 ms,
// its preferred node 1, its group's footprint 300 pages.
constexpr char kTickOnNodeOne[] =
    "          <idle>-0       (-----) [000] 0.000000000: sched_switch: "
    "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
    "next_comm=w next_pid=11 next_prio=120\n"
    "               w-11      (     10) [000] 0.001500000: "
    "schedcache_sched_tick: pid=11 tgid=10 jiffies=2 numa_preferred_nid=1 "
    "footprint=300\n";

// The tick's Sample is the last one (the grid's ticks at 1 ms come first).
Sample TickSample(const Topology& topology, ReplayStats& stats) {
  TraceOptions options;
  options.hz = 1000;
  options.topology = &topology;
  RecordingSink sink;
  absl::StatusOr<ReplayStats> replayed =
      ReplayTraceText(kTickOnNodeOne, options, sink);
  EXPECT_TRUE(replayed.ok()) << replayed.status();
  stats = *replayed;
  const std::vector<Sample> samples = sink.Samples();
  EXPECT_FALSE(samples.empty());
  return samples.empty() ? Sample{} : samples.back();
}

TEST(ReplayTopology, KeepsAPreferredNodeTheTopologyHas) {
  ReplayStats stats;
  const Sample tick = TickSample(FourCpus({0, 0, 1, 1}), stats);
  EXPECT_EQ(tick.numa_node, 1);
  EXPECT_EQ(tick.footprint_pages, 300);
  EXPECT_EQ(stats.foreign_numa_nodes, 0);
  EXPECT_EQ(stats.malformed_lines, 0);
}

TEST(ReplayTopology, ReplaysWithoutAPreferredNodeTheTopologyLacks) {
  // On one node, node 1 means nothing: the Sample goes without it (and
  // is not refused as one naming an unknown node), keeps its footprint,
  // and the line counts as foreign, not malformed.
  ReplayStats stats;
  const Sample tick = TickSample(FourCpus({0, 0, 0, 0}), stats);
  EXPECT_TRUE(tick.tick);
  EXPECT_EQ(tick.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(tick.footprint_pages, 300);
  EXPECT_EQ(stats.foreign_numa_nodes, 1);
  EXPECT_EQ(stats.malformed_lines, 0);
}

}  // namespace
}  // namespace schedcache
