// The wake-up placement order of simulator.h (select_idle_sibling's), on a
// hand-built machine small enough to follow every placement by hand.
#include "eval/workload/simulator.h"

#include <functional>
#include <utility>
#include <vector>

#include "events/recording_sink.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

constexpr int32_t kTgid = 10;
constexpr int64_t kLong = 10'000'000;  // a burst that outlasts every run

// TwoLlcsOfFourSmtCores: LLC 0 holds CPUs 0-7, LLC 1 CPUs 8-15; CPUs 2k and
// 2k+1 are the two SMT siblings of core k. One package, one node.
Topology TwoLlcsOfFourSmtCores() {
  TopologySpec spec;
  spec.source = "test:2x4x2";
  for (int cpu = 0; cpu < 16; ++cpu) {
    spec.cpus.push_back(CpuSpec{cpu, cpu / 2, 0, 0});
  }
  for (int llc = 0; llc < 2; ++llc) {
    CacheSpec cache;
    cache.size_bytes = 8 << 20;
    cache.cpus = CpuSet::FromRange(llc * 8, llc * 8 + 7);
    spec.llcs.push_back(cache);
  }
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *std::move(topology);
}

// ScriptedBehavior runs `on_burst_end` at every burst end.
class ScriptedBehavior : public Behavior {
 public:
  explicit ScriptedBehavior(std::function<absl::Status(Simulator&, int)> fn)
      : fn_(std::move(fn)) {}
  absl::Status OnBurstEnd(Simulator& sim, int thread) override {
    return fn_(sim, thread);
  }

 private:
  std::function<absl::Status(Simulator&, int)> fn_;
};

// Fixture: one process (kTgid) that prefers LLC 0 and never spills, so
// every wake-up targets LLC 0.
class SimulatorPlacement : public ::testing::Test {
 protected:
  SimulatorPlacement()
      : topology_(TwoLlcsOfFourSmtCores()),
        random_(1),
        sim_(topology_, Params(), [](int32_t) { return 0; }, random_, sink_) {}

  static Simulator::Params Params() {
    Simulator::Params params;
    params.end_ns = 2'000'000;
    params.spill_probability = 0;
    return params;
  }

  int Add(int32_t tid) { return sim_.AddThread(kTgid, tid, "t"); }

  // CpusOf lists the CPUs `tid` was handed, in order.
  std::vector<int> CpusOf(int32_t tid) const {
    std::vector<int> cpus;
    for (const HandOver& h : sink_.HandOvers()) {
      if (h.tid == tid) cpus.push_back(h.cpu);
    }
    return cpus;
  }

  const Topology topology_;
  DeterministicRandom random_;
  RecordingSink sink_;
  Simulator sim_;
};

TEST_F(SimulatorPlacement, AnIdleCoreWinsOverAnIdleSiblingOfABusyCore) {
  // Five spinners woken at time 0, nobody waking them (target: CPU 0, the
  // LLC's first). 1st: CPU 0 is idle. 2nd: CPU 1 is idle but its sibling 0
  // is busy; the first idle core after CPU 0 is core 1: CPU 2. 3rd: CPU 4,
  // 4th: CPU 6. 5th: no idle core left, so the first idle CPU after CPU 0:
  // CPU 1.
  std::vector<int> threads;
  for (int32_t tid = 11; tid <= 15; ++tid) threads.push_back(Add(tid));
  for (int thread : threads) ASSERT_TRUE(sim_.Wake(thread, -1, kLong).ok());
  ScriptedBehavior spin(
      [](Simulator& sim, int thread) { return sim.Continue(thread, kLong); });
  ASSERT_TRUE(sim_.Run(spin).ok());
  EXPECT_EQ(CpusOf(11), std::vector<int>{0});
  EXPECT_EQ(CpusOf(12), std::vector<int>{2});
  EXPECT_EQ(CpusOf(13), std::vector<int>{4});
  EXPECT_EQ(CpusOf(14), std::vector<int>{6});
  EXPECT_EQ(CpusOf(15), std::vector<int>{1});
}

TEST_F(SimulatorPlacement, AWokenThreadKeepsItsIdlePreviousCpu) {
  // a: CPU 0, runs 100 ns and sleeps. b: CPU 2 (the first idle core), and
  // at 1000 ns wakes a. The target is b's CPU 2 (busy); a's previous CPU 0
  // is idle and in the target LLC, so a goes back there, although the
  // search from the target would have found the idle core of CPU 4 first.
  const int a = Add(11);
  const int b = Add(12);
  ASSERT_TRUE(sim_.Wake(a, -1, 100).ok());
  ASSERT_TRUE(sim_.Wake(b, -1, 1000).ok());
  bool woke = false;
  ScriptedBehavior script([&](Simulator& sim, int thread) -> absl::Status {
    if (thread == a) return sim.Block(a);
    if (!woke) {
      woke = true;
      if (absl::Status s = sim.Wake(a, b, 100); !s.ok()) return s;
    }
    return sim.Continue(b, kLong);
  });
  ASSERT_TRUE(sim_.Run(script).ok());
  EXPECT_EQ(CpusOf(11), (std::vector<int>{0, 0}));
  EXPECT_EQ(CpusOf(12), std::vector<int>{2});
}

TEST_F(SimulatorPlacement, WithoutAnIdleCoreTheSiblingOfThePreviousCpuWins) {
  // s0, s1, s2 spin on CPUs 0, 2, 4; a takes the idle core of CPU 6, runs
  // 100 ns, sleeps, and s3 then takes that core (CPU 6). At 1000 ns s0 wakes
  // a: the target (CPU 0) and a's previous CPU 6 are busy, no core is idle,
  // so a takes CPU 7, the idle sibling of CPU 6, not CPU 1, the first idle
  // CPU after the target.
  std::vector<int> spinners;
  for (int32_t tid = 11; tid <= 13; ++tid) spinners.push_back(Add(tid));
  const int a = Add(20);
  const int s3 = Add(14);
  ASSERT_TRUE(sim_.Wake(spinners[0], -1, 1000).ok());
  ASSERT_TRUE(sim_.Wake(spinners[1], -1, kLong).ok());
  ASSERT_TRUE(sim_.Wake(spinners[2], -1, kLong).ok());
  ASSERT_TRUE(sim_.Wake(a, -1, 100).ok());
  bool a_slept = false;
  bool a_woken = false;
  ScriptedBehavior script([&](Simulator& sim, int thread) -> absl::Status {
    if (thread == a) {
      if (a_slept) return sim.Continue(a, kLong);
      a_slept = true;
      if (absl::Status s = sim.Block(a); !s.ok()) return s;
      return sim.Wake(s3, -1, kLong);
    }
    if (thread == spinners[0] && !a_woken) {
      a_woken = true;
      if (absl::Status s = sim.Wake(a, thread, kLong); !s.ok()) return s;
    }
    return sim.Continue(thread, kLong);
  });
  ASSERT_TRUE(sim_.Run(script).ok());
  EXPECT_EQ(CpusOf(20), (std::vector<int>{6, 7}));
  EXPECT_EQ(CpusOf(14), std::vector<int>{6});
}

}  // namespace
}  // namespace schedcache
