#include "eval/workload/workload.h"

#include <map>
#include <set>
#include <variant>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int32_t kServerTgid = 1000;  // workload.h
constexpr int32_t kClientTgid = 2000;

// The 384-CPU shape of a 2-socket EPYC 9654 without SMT: 2 packages x 12
// LLCs x 16 CPUs, one NUMA node per package.
Topology Epyc384() {
  TopologySpec spec;
  spec.source = "test:2x12x16";
  for (int cpu = 0; cpu < 384; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu, cpu / 192, cpu / 192});
  }
  for (int llc = 0; llc < 24; ++llc) {
    CacheSpec cache;
    cache.size_bytes = 32 << 20;
    cache.cpus = CpuSet::FromRange(llc * 16, llc * 16 + 15);
    spec.llcs.push_back(cache);
  }
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *std::move(topology);
}

WorkloadOptions Redis(uint64_t seed, int64_t duration_ns = 20 * kMs) {
  WorkloadOptions options;
  options.kind = WorkloadKind::kRedis;
  options.seed = seed;
  options.duration_ns = duration_ns;
  return options;
}

WorkloadOptions Hackbench(int groups, int fds) {
  WorkloadOptions options;
  options.kind = WorkloadKind::kHackbench;
  options.groups = groups;
  options.fds = fds;
  options.duration_ns = 20 * kMs;
  return options;
}

RecordingSink Generate(const Topology& topology, const WorkloadOptions& options,
                       const PreferredLlcFn& preferred = {}) {
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats =
      RunWorkload(topology, options, preferred, sink);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return sink;
}

bool SameEvent(const RecordingSink::Event& a, const RecordingSink::Event& b) {
  if (a.index() != b.index()) return false;
  if (const Sample* s = std::get_if<Sample>(&a)) {
    const Sample& t = std::get<Sample>(b);
    return s->timestamp_ns == t.timestamp_ns && s->cpu == t.cpu &&
           s->tgid == t.tgid && s->tid == t.tid && s->delta_ns == t.delta_ns &&
           s->tick == t.tick && s->nr_threads == t.nr_threads &&
           s->comm.view() == t.comm.view();
  }
  const HandOver& h = std::get<HandOver>(a);
  const HandOver& g = std::get<HandOver>(b);
  return h.timestamp_ns == g.timestamp_ns && h.cpu == g.cpu &&
         h.tgid == g.tgid && h.tid == g.tid;
}

bool SameStream(const RecordingSink& a, const RecordingSink& b) {
  if (a.events().size() != b.events().size()) return false;
  for (size_t i = 0; i < a.events().size(); ++i) {
    if (!SameEvent(a.events()[i], b.events()[i])) return false;
  }
  return true;
}

TEST(Workload, SameSeedGivesTheSameStreamAndAnotherSeedAnother) {
  const Topology topology = Epyc384();
  const RecordingSink a = Generate(topology, Redis(7));
  const RecordingSink b = Generate(topology, Redis(7));
  const RecordingSink c = Generate(topology, Redis(8));
  ASSERT_GT(a.events().size(), 1000u);
  EXPECT_TRUE(SameStream(a, b));
  EXPECT_FALSE(SameStream(a, c));
}

TEST(Workload, EventsAreTimeOrderedAndInsideTheRun) {
  const Topology topology = Epyc384();
  for (const WorkloadOptions& options : {Redis(3), Hackbench(2, 10)}) {
    const RecordingSink sink = Generate(topology, options);
    int64_t last = 0;
    for (const RecordingSink::Event& e : sink.events()) {
      ASSERT_GE(TimestampOf(e), last);
      last = TimestampOf(e);
      // A workload ends no process, so every event names a CPU.
      ASSERT_TRUE(topology.HasCpu(CpuOf(e).value_or(-1)));
    }
    EXPECT_LE(last, options.start_ns + options.duration_ns);
  }
}

// Replays hand-overs and switch-out samples: a thread handed a CPU must not
// be current anywhere else, and samples come from the CPU's current thread.
TEST(Workload, ThreadsNeverRunOnTwoCpusAtOnce) {
  const Topology topology = Epyc384();
  for (const WorkloadOptions& options : {Redis(5), Hackbench(4, 10)}) {
    const RecordingSink sink = Generate(topology, options);
    std::map<int32_t, int32_t> cpu_of;      // tid -> CPU it is current on
    std::map<int32_t, int32_t> current_of;  // CPU -> tid (0: idle)
    for (const RecordingSink::Event& e : sink.events()) {
      if (const HandOver* h = std::get_if<HandOver>(&e)) {
        ASSERT_EQ(current_of[h->cpu], 0) << "cpu " << h->cpu << " was busy";
        if (h->tid != 0) {
          ASSERT_EQ(cpu_of.count(h->tid), 0u) << "tid " << h->tid;
          cpu_of[h->tid] = h->cpu;
        }
        current_of[h->cpu] = h->tid;
        continue;
      }
      const Sample& s = std::get<Sample>(e);
      ASSERT_EQ(current_of[s.cpu], s.tid);
      if (!s.tick) {
        cpu_of.erase(s.tid);
        current_of[s.cpu] = 0;
      }
    }
  }
}

TEST(Workload, PlacementKeepsAProcessInItsPreferredLlc) {
  const Topology topology = Epyc384();
  WorkloadOptions options = Redis(11, 50 * kMs);
  options.spill_probability = 0;
  const int kLlc = 17;
  const PreferredLlcFn prefer = [](int32_t tgid) {
    return tgid == kServerTgid ? kLlc : -1;
  };
  const RecordingSink sink = Generate(topology, options, prefer);
  std::set<int> server_cpus;
  for (const HandOver& h : sink.HandOvers()) {
    if (h.tgid != kServerTgid) continue;
    EXPECT_EQ(topology.LlcOf(h.cpu), kLlc) << "cpu " << h.cpu;
    server_cpus.insert(h.cpu);
  }
  EXPECT_FALSE(server_cpus.empty());
  EXPECT_LE(server_cpus.size(), 16u);
}

TEST(Workload, SpilledWakeUpsLandNearTheWakerInstead) {
  // The server prefers LLC 3 and the clients LLC 10: a spilled server
  // wake-up follows its waker, a client, into LLC 10.
  const Topology topology = Epyc384();
  WorkloadOptions options = Redis(11, 50 * kMs);
  options.spill_probability = 0.5;
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats = RunWorkload(
      topology, options,
      [](int32_t tgid) { return tgid == kServerTgid ? 3 : 10; }, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->placement.spills, 0);
  std::map<int, int> server_runs_per_llc;
  for (const HandOver& h : sink.HandOvers()) {
    if (h.tgid == kServerTgid) ++server_runs_per_llc[topology.LlcOf(h.cpu)];
  }
  EXPECT_GT(server_runs_per_llc[3], 0);
  EXPECT_GT(server_runs_per_llc[10], 0);
}

TEST(Workload, HackbenchHasOneProcessWithMainPlusTwoThreadsPerFd) {
  const Topology topology = Epyc384();
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats =
      RunWorkload(topology, Hackbench(2, 10), {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->processes.size(), 1u);
  EXPECT_EQ(stats->processes[0].threads, 41);
  std::set<int32_t> tids;
  for (const Sample& s : sink.Samples()) {
    EXPECT_EQ(s.nr_threads, 41);
    EXPECT_EQ(s.tgid, stats->processes[0].tgid);
    tids.insert(s.tid);
  }
  EXPECT_EQ(tids.size(), 40u);  // every worker ran; the main thread waits
}

TEST(Workload, RedisProcessesReportTheirThreadCounts) {
  const Topology topology = Epyc384();
  const RecordingSink sink = Generate(topology, Redis(2));
  std::map<int32_t, std::set<int32_t>> tids;
  for (const Sample& s : sink.Samples()) {
    EXPECT_EQ(s.nr_threads, s.tgid == kServerTgid ? 4 : 8) << s.tgid;
    tids[s.tgid].insert(s.tid);
  }
  EXPECT_EQ(tids[kServerTgid].size(), 4u);
  EXPECT_EQ(tids[kClientTgid].size(), 8u);
}

TEST(Workload, NumaPreferredNodeIsTheNodeOfTheProcessesFirstCpu) {
  const Topology topology = Epyc384();
  WorkloadOptions options = Redis(2);
  const RecordingSink plain = Generate(topology, options);
  for (const Sample& s : plain.Samples()) {
    EXPECT_EQ(s.numa_node, kUnchangedNumaNode);
  }
  options.numa_preferred_node = true;
  const RecordingSink stamped = Generate(topology, options);
  // Stamping changes no placement: the same stream, plus the node.
  EXPECT_TRUE(SameStream(plain, stamped));
  std::map<int32_t, int32_t> first_node;
  for (const Sample& s : stamped.Samples()) {
    first_node.try_emplace(s.tgid, topology.NodeOf(s.cpu));
    EXPECT_EQ(s.numa_node, first_node[s.tgid]) << s.tgid;
  }
  EXPECT_EQ(first_node.size(), 2u);
}

TEST(Workload, NoCpuRunsLongerThanTheRun) {
  const Topology topology = Epyc384();
  RecordingSink sink;
  const WorkloadOptions options = Hackbench(4, 10);
  absl::StatusOr<WorkloadStats> stats = RunWorkload(topology, options, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  int64_t total = 0;
  for (int64_t ns : stats->runtime_ns) {
    EXPECT_LE(ns, options.duration_ns);
    total += ns;
  }
  EXPECT_GT(total, 0);
  EXPECT_GT(stats->tick_samples, 0);
}

TEST(Workload, RejectsBadOptions) {
  const Topology topology = Epyc384();
  RecordingSink sink;
  WorkloadOptions options = Redis(1);
  options.client_threads = 0;
  EXPECT_EQ(RunWorkload(topology, options, {}, sink).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Redis(1);
  options.spill_probability = 1.5;
  EXPECT_FALSE(ValidateWorkloadOptions(options).ok());
  options = Hackbench(1, 1);
  options.message_burst_max_ns = 1;  // below the 2 us minimum
  EXPECT_FALSE(ValidateWorkloadOptions(options).ok());
  EXPECT_FALSE(ParseWorkloadKind("tbench").ok());
  EXPECT_EQ(*ParseWorkloadKind("hackbench"), WorkloadKind::kHackbench);
}

}  // namespace
}  // namespace schedcache
