// Ingest throughput of one session engine on the 384-CPU EPYC topology with
// full-scan and visited-scan side by side: samples per second on one core.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

// Workload: 96 processes x 8 threads, each thread pinned to one CPU (so a
// process runs on 8 CPUs of one LLC pair), ticking every 1 ms: scans run
// about once per epoch per process, as in the kernel.
std::vector<Sample> MakeSamples(int count) {
  std::vector<Sample> samples;
  samples.reserve(count);
  constexpr int kProcesses = 96;
  constexpr int kThreads = 8;
  int64_t ts = 0;
  while (static_cast<int>(samples.size()) < count) {
    ts += 1'000'000;
    for (int p = 0; p < kProcesses; ++p) {
      for (int t = 0; t < kThreads; ++t) {
        const int cpu = (p * 4 + t) % 384;
        Sample s = testing::SampleAt(ts, cpu, 1000 + p, 100000 + p * 16 + t,
                                     250'000, /*tick=*/true, kThreads);
        samples.push_back(s);
      }
    }
  }
  samples.resize(count);
  return samples;
}

// The policies of each run, by benchmark argument.
const std::vector<std::string>& PoliciesOf(int64_t index) {
  static const auto& kSets = *new std::vector<std::vector<std::string>>{
      {"full-scan", "visited-scan"}, {"visited-scan"}, {"full-scan"}, {"none"}};
  return kSets[index];
}

void BM_Ingest(benchmark::State& state) {
  const std::vector<Sample> samples = MakeSamples(1 << 20);
  state.SetLabel(absl::StrJoin(PoliciesOf(state.range(0)), ","));
  auto engine = testing::MakeEngine(testing::MakeEpyc384(),
                                    PoliciesOf(state.range(0)));
  if (!engine.ok()) {
    state.SkipWithError("engine");
    return;
  }
  // Time moves on between rounds, so the replay can repeat.
  int64_t offset = 0;
  for (auto _ : state) {
    for (Sample s : samples) {
      s.timestamp_ns += offset;
      benchmark::DoNotOptimize((*engine)->ApplySample(s));
    }
    offset += samples.back().timestamp_ns + 1'000'000;
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(samples.size()));
}
BENCHMARK(BM_Ingest)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace schedcache

BENCHMARK_MAIN();
