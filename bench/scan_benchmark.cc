// Scan microbenchmarks: one KernelModel scan per iteration, full-scan
// against visited-scan on the same state, with the CPUs and LLCs each scan
// visited reported beside the time. States:
//  - redis384: the Redis server after a Redis-like stream on the 384-CPU
//    EPYC 9654 shape (about 16 CPUs visited);
//  - spread384: a process that ran on every third CPU of that shape (128);
//  - redis32: the Redis server on a small desktop shape (2 LLCs, 32 CPUs).
// Counter same_llc is 1 when both policies chose the same LLC.
// BM_ScanSideBySide/<state> alternates blocks of full and visited scans of
// the same state within each iteration, so that a burst of machine noise
// lands on both; its `ratio` counter is issue 6's target 1.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_main.h"
#include "bench/redis_stream.h"
#include "bench/scan_state.h"
#include "benchmark/benchmark.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

// kDesktopShape is a small machine: one node, two 8-core SMT-2 L3s (a
// two-CCD desktop part).
constexpr absl::string_view kDesktopShape =
    "synthetic:pack:1 numa:1 l3:2 core:8 pu:2";

void BM_Scan(benchmark::State& bench, ScanState* state, ScanScope scope) {
  state->Scan(ScanScope::kAllCpus);
  state->Scan(ScanScope::kVisitedCpus);
  const bool same = state->PreferredLlc(ScanScope::kAllCpus) ==
                    state->PreferredLlc(ScanScope::kVisitedCpus);
  int64_t cpus = 0;
  int64_t llcs = 0;
  for (auto _ : bench) {
    const ScanOutcome outcome = state->Scan(scope);
    cpus += outcome.cost.cpus_scanned;
    llcs += outcome.cost.llcs_scanned;
    benchmark::DoNotOptimize(outcome);
  }
  if (state->PreferredLlc(scope) < 0) {
    bench.SkipWithError("the state gives no preferred LLC");
  }
  using benchmark::Counter;
  bench.counters["cpus_scanned"] = Counter(cpus, Counter::kAvgIterations);
  bench.counters["llcs_scanned"] = Counter(llcs, Counter::kAvgIterations);
  bench.counters["visited_cpus"] = state->visited_cpus();
  bench.counters["same_llc"] = same ? 1 : 0;
}

// kSideBySideBlock scans of each policy per iteration: a block of full
// scans takes about 0.1 ms, so the two policies alternate many times per
// repetition.
constexpr int kSideBySideBlock = 32;

// TimeBlock runs kSideBySideBlock scans of `scope` and returns their total
// wall time in ns.
double TimeBlock(ScanState& state, ScanScope scope) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kSideBySideBlock; ++i) {
    benchmark::DoNotOptimize(state.Scan(scope));
  }
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now() - start)
      .count();
}

void BM_ScanSideBySide(benchmark::State& bench, ScanState* state) {
  double full_ns = 0;
  double visited_ns = 0;
  for (auto _ : bench) {
    full_ns += TimeBlock(*state, ScanScope::kAllCpus);
    visited_ns += TimeBlock(*state, ScanScope::kVisitedCpus);
  }
  const bool same = state->PreferredLlc(ScanScope::kAllCpus) ==
                    state->PreferredLlc(ScanScope::kVisitedCpus);
  const double scans =
      static_cast<double>(bench.iterations()) * kSideBySideBlock;
  bench.counters["full_ns"] = full_ns / scans;
  bench.counters["visited_ns"] = visited_ns / scans;
  bench.counters["ratio"] = visited_ns > 0 ? full_ns / visited_ns : 0;
  bench.counters["same_llc"] = same ? 1 : 0;
}

absl::Status RegisterAll(const BenchArgs& args,
                         std::vector<std::unique_ptr<ScanState>>& states) {
  const int64_t stream_ns = args.stream_ms * 1'000'000;
  ASSIGN_OR_RETURN(RecordedStream epyc,
                   RecordStream(kEpyc9654Shape, RedisOptions(stream_ns)));
  ASSIGN_OR_RETURN(RecordedStream desktop,
                   RecordStream(kDesktopShape, RedisOptions(stream_ns)));
  std::vector<std::pair<std::string, std::unique_ptr<ScanState>>> named;
  {
    ASSIGN_OR_RETURN(auto s, ScanState::FromStream(epyc, kRedisServerTgid));
    named.emplace_back("redis384", std::move(s));
  }
  {
    ASSIGN_OR_RETURN(auto s, ScanState::Spread(epyc.topology, 3));
    named.emplace_back("spread384", std::move(s));
  }
  {
    ASSIGN_OR_RETURN(auto s, ScanState::FromStream(desktop, kRedisServerTgid));
    named.emplace_back("redis32", std::move(s));
  }
  for (auto& [name, state] : named) {
    for (const auto& [policy, scope] :
         {std::pair{"full-scan", ScanScope::kAllCpus},
          std::pair{"visited-scan", ScanScope::kVisitedCpus}}) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_Scan/", policy, "/", name).c_str(), BM_Scan,
          state.get(), scope);
    }
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_ScanSideBySide/", name).c_str(), BM_ScanSideBySide,
        state.get());
    states.push_back(std::move(state));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<schedcache::ScanState>> states;
  return schedcache::RunBenchmarks(
      argc, argv, [&](const schedcache::BenchArgs& args) {
        return schedcache::RegisterAll(args, states);
      });
}
