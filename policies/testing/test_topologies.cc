#include "policies/testing/test_topologies.h"

#include <utility>

namespace schedcache::test_support {
namespace {

std::shared_ptr<const Topology> Build(TopologySpec spec) {
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  if (!topology.ok()) return nullptr;  // tests ASSERT_NE(..., nullptr)
  return std::make_shared<const Topology>(*std::move(topology));
}

}  // namespace

std::shared_ptr<const Topology> MakeGrid(const GridShape& shape) {
  TopologySpec spec;
  spec.source = "test grid";
  int cpu = 0;
  for (int node = 0; node < shape.nodes; ++node) {
    for (int l = 0; l < shape.llcs_per_node; ++l) {
      CacheSpec llc{3, shape.llc_bytes, CpuSet()};
      for (int i = 0; i < shape.cpus_per_llc; ++i, ++cpu) {
        spec.cpus.push_back(CpuSpec{cpu, cpu / shape.smt, node, node});
        llc.cpus.Set(cpu);
      }
      spec.llcs.push_back(std::move(llc));
    }
  }
  return Build(std::move(spec));
}

std::shared_ptr<const Topology> MakeEpyc384() {
  TopologySpec spec;
  spec.source = "test EPYC 9654 x2";
  constexpr int kCores = 192;
  for (int core = 0; core < kCores; ++core) {
    const int package = core / 96;
    for (int thread = 0; thread < 2; ++thread) {
      spec.cpus.push_back(
          CpuSpec{core + thread * kCores, core, package, package});
    }
  }
  for (int llc = 0; llc < 24; ++llc) {
    CacheSpec cache{3, kLlcBytes32MiB, CpuSet()};
    for (int i = 0; i < 8; ++i) {
      cache.cpus.Set(8 * llc + i);
      cache.cpus.Set(kCores + 8 * llc + i);
    }
    spec.llcs.push_back(std::move(cache));
  }
  return Build(std::move(spec));
}

Sample SampleAt(int64_t ts, int cpu, int32_t tgid, int32_t tid, int64_t delta_ns,
           bool tick, int32_t nr_threads) {
  Sample s;
  s.timestamp_ns = ts;
  s.cpu = cpu;
  s.tgid = tgid;
  s.tid = tid;
  s.delta_ns = delta_ns;
  s.tick = tick;
  s.nr_threads = nr_threads;
  return s;
}

}  // namespace schedcache::test_support
