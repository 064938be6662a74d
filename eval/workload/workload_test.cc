#include "eval/workload/workload.h"

#include <map>
#include <set>
#include <string>
#include <utility>
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

TEST(Workload, RedisInstancesAreDistinctProcessesNumberedAsDocumented) {
  // 3 instances of 2 server and 3 client threads (workload.h): servers
  // 1000, 1002, 1004 (tids 1000-1005), benchmarks from 2000 (the next
  // multiple of 1000 above tid 1005): 2000, 2003, 2006 (tids 2000-2008).
  const Topology topology = Epyc384();
  WorkloadOptions options = Redis(4);
  options.instances = 3;
  options.server_threads = 2;
  options.client_threads = 3;
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats = RunWorkload(topology, options, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::vector<std::pair<int32_t, int32_t>> processes;  // tgid, threads
  for (const WorkloadProcess& p : stats->processes) {
    processes.emplace_back(p.tgid, p.threads);
    EXPECT_EQ(p.comm, p.tgid < 2000 ? "redis-server" : "redis-benchmark");
  }
  EXPECT_EQ(processes, (std::vector<std::pair<int32_t, int32_t>>{
                           {1000, 2}, {1002, 2}, {1004, 2},
                           {2000, 3}, {2003, 3}, {2006, 3}}));
  std::map<int32_t, std::set<int32_t>> tids;
  for (const Sample& s : sink.Samples()) tids[s.tgid].insert(s.tid);
  EXPECT_EQ(tids[1002], (std::set<int32_t>{1002, 1003}));
  EXPECT_EQ(tids[2006], (std::set<int32_t>{2006, 2007, 2008}));
  EXPECT_EQ(tids.size(), 6u);  // every process ran
  EXPECT_GT(stats->requests, 0);
}

TEST(Workload, BenchmarkIdsStartAboveTheLastServerThread) {
  // 2 x 600 server threads end at tid 2199, so the benchmarks start at 3000.
  WorkloadOptions options = Redis(1, kMs);
  options.instances = 2;
  options.server_threads = 600;
  options.client_threads = 1;
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats =
      RunWorkload(Epyc384(), options, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->processes.size(), 4u);
  EXPECT_EQ(stats->processes[1].tgid, 1600);
  EXPECT_EQ(stats->processes[2].tgid, 3000);
  EXPECT_EQ(stats->processes[3].tgid, 3001);
}

TEST(Workload, ValkeyIsTheSeedsMultiInstanceShapeWithItsComms) {
  WorkloadOptions options = Redis(1);
  options.kind = WorkloadKind::kValkey;
  const RedisShape shape = RedisShapeOf(options);
  EXPECT_GT(shape.instances, 1);
  EXPECT_EQ(shape.server_comm, "redis-server");
  // valkey-benchmark cut to the kernel's 15-byte comm, as the seed prints.
  EXPECT_EQ(shape.client_comm, "valkey-benchmar");
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats =
      RunWorkload(Epyc384(), options, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->processes.size(), 2u * shape.instances);
  std::set<std::string> comms;
  for (const Sample& s : sink.Samples()) comms.insert(std::string(s.comm.view()));
  EXPECT_TRUE(comms.count("valkey-benchmar")) << "no benchmark sample";
  EXPECT_TRUE(comms.count("redis-server")) << "no server sample";
  // A size given overrides the preset's; 0 keeps it.
  options.client_threads = 2;
  EXPECT_EQ(RedisShapeOf(options).client_threads, 2);
  EXPECT_EQ(RedisShapeOf(options).instances, shape.instances);
}

TEST(Workload, ValkeyRunsNearTheSeedsRequestRate) {
  // 3 x 4 client threads, each in a 1:1 ping-pong with a server thread of
  // its own on an otherwise idle machine: one request per client burst
  // (uniform 10..30 us, mean 20) plus server burst (5..20 us, mean 12.5),
  // so 12 / 32.5 us = 369,231 requests/s, 73,846 in 200 ms. The bursts'
  // noise over ~6,000 requests per client is well under 1%; allow 2%.
  WorkloadOptions options = Redis(1, 200 * kMs);
  options.kind = WorkloadKind::kValkey;
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats =
      RunWorkload(Epyc384(), options, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_NEAR(stats->requests, 73'846, 1'477);
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
  options.client_threads = -1;  // 0 would take the kind's own
  EXPECT_EQ(RunWorkload(topology, options, {}, sink).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = Redis(1);
  options.spill_probability = 1.5;
  EXPECT_FALSE(ValidateWorkloadOptions(options).ok());
  options = Hackbench(1, 1);
  options.message_burst_max_ns = 1;  // below the 2 us minimum
  EXPECT_FALSE(ValidateWorkloadOptions(options).ok());
  options = Redis(1);
  options.instances = 1000;
  options.server_threads = 50;
  options.client_threads = 51;  // 1000 x 101 threads > 100000
  const absl::Status too_many = ValidateWorkloadOptions(options);
  EXPECT_EQ(too_many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("= 101000 threads"), std::string::npos)
      << too_many;
  options = Redis(1);
  options.instances = -1;
  EXPECT_NE(ValidateWorkloadOptions(options).message().find("instances is -1"),
            std::string::npos);
  EXPECT_FALSE(ParseWorkloadKind("tbench").ok());
  EXPECT_EQ(*ParseWorkloadKind("hackbench"), WorkloadKind::kHackbench);
  EXPECT_EQ(*ParseWorkloadKind("valkey"), WorkloadKind::kValkey);
}

}  // namespace
}  // namespace schedcache
