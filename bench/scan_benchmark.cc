// Scan microbenchmarks: one KernelModel scan per iteration, full-scan
// against visited-scan on the same state, with the CPUs and LLCs each scan
// visited reported beside the time. States:
//  - redis384: the Redis server after a Redis-like stream on the 384-CPU
//    EPYC 9654 shape (about 16 CPUs visited);
//  - spread384: a process that ran on every third CPU of that shape (128);
//  - redis32: the Redis server on a small desktop shape (2 LLCs, 32 CPUs);
//  - redis4096: the Redis server on a 4096-CPU shape of the same LLCs (16
//    CPUs each), so its visited set is redis384's size on 10.7x the CPUs.
// Counter same_llc is 1 when both policies chose the same LLC.
// Side-by-side benchmarks alternate blocks of two kinds of scans within each
// iteration, so that a burst of machine noise lands on both, and report
// each kind's time per scan and their `ratio`:
//  - BM_ScanSideBySide/<state>: full-scan over visited-scan on one state
//    (docs/PERFORMANCE.md target: >= 15x on redis384);
//  - BM_ScanScaling/<policy>: one policy on redis4096 over redis384
//    (visited-scan within 1.1x; full-scan linear, about 4096 / 384).
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
// kLarge4096Shape is 16 packages of 16 of the EPYC's LLCs (8 cores x 2
// threads): 4096 CPUs, 256 LLCs.
constexpr absl::string_view kLarge4096Shape =
    "synthetic:pack:16 numa:1 l3:16 core:8 pu:2";

// SameLlc is true when both policies chose the same LLC on `state`.
bool SameLlc(const ScanState& state) {
  return state.PreferredLlc(ScanScope::kAllCpus) ==
         state.PreferredLlc(ScanScope::kVisitedCpus);
}

// BM_Scan runs `scope`'s scans only (RegisterAll scanned each state once
// with both policies), so an instruction count of the benchmark divided by
// its scans is the cost of one scan.
void BM_Scan(benchmark::State& bench, ScanState* state, ScanScope scope) {
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
  bench.counters["same_llc"] = SameLlc(*state) ? 1 : 0;
}

// kSideBySideBlock scans of each kind per iteration: a block of full scans
// of redis384 takes about 0.1 ms, so the kinds alternate many times per
// repetition.
constexpr int kSideBySideBlock = 32;

// ScanKind is one side of a side-by-side benchmark: a policy's scan of a
// state, named `label` in the counters (`<label>_ns`).
struct ScanKind {
  std::string label;
  ScanState* state;
  ScanScope scope;
};

// TimeBlock runs kSideBySideBlock scans of `kind` and returns their total
// wall time in ns.
double TimeBlock(const ScanKind& kind) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kSideBySideBlock; ++i) {
    benchmark::DoNotOptimize(kind.state->Scan(kind.scope));
  }
  return std::chrono::duration<double, std::nano>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// BM_SideBySide alternates blocks of `a` and `b`; `ratio` is a's time per
// scan over b's.
void BM_SideBySide(benchmark::State& bench, const ScanKind& a,
                   const ScanKind& b) {
  double a_ns = 0;
  double b_ns = 0;
  for (auto _ : bench) {
    a_ns += TimeBlock(a);
    b_ns += TimeBlock(b);
  }
  const double scans =
      static_cast<double>(bench.iterations()) * kSideBySideBlock;
  bench.counters[a.label + "_ns"] = a_ns / scans;
  bench.counters[b.label + "_ns"] = b_ns / scans;
  bench.counters["ratio"] = b_ns > 0 ? a_ns / b_ns : 0;
  bench.counters["same_llc"] = SameLlc(*a.state) && SameLlc(*b.state) ? 1 : 0;
}

absl::Status RegisterAll(const BenchArgs& args,
                         std::vector<std::unique_ptr<ScanState>>& states) {
  const int64_t stream_ns = args.stream_ms * 1'000'000;
  ASSIGN_OR_RETURN(RecordedStream epyc,
                   RecordStream(kEpyc9654Shape, RedisOptions(stream_ns)));
  ASSIGN_OR_RETURN(RecordedStream desktop,
                   RecordStream(kDesktopShape, RedisOptions(stream_ns)));
  ASSIGN_OR_RETURN(RecordedStream large,
                   RecordStream(kLarge4096Shape, RedisOptions(stream_ns)));
  ASSIGN_OR_RETURN(std::unique_ptr<ScanState> redis384,
                   ScanState::FromStream(epyc, kRedisServerTgid));
  ASSIGN_OR_RETURN(std::unique_ptr<ScanState> spread384,
                   ScanState::Spread(epyc.topology, 3));
  ASSIGN_OR_RETURN(std::unique_ptr<ScanState> redis32,
                   ScanState::FromStream(desktop, kRedisServerTgid));
  ASSIGN_OR_RETURN(std::unique_ptr<ScanState> redis4096,
                   ScanState::FromStream(large, kRedisServerTgid));
  // One scan of each policy first, so both preferences come from this
  // state (same_llc compares them).
  for (ScanState* state :
       {redis384.get(), spread384.get(), redis32.get(), redis4096.get()}) {
    state->Scan(ScanScope::kAllCpus);
    state->Scan(ScanScope::kVisitedCpus);
  }
  constexpr std::pair<const char*, ScanScope> kPolicies[] = {
      {"full-scan", ScanScope::kAllCpus},
      {"visited-scan", ScanScope::kVisitedCpus}};
  for (const auto& [name, state] :
       {std::pair{"redis384", redis384.get()},
        std::pair{"spread384", spread384.get()},
        std::pair{"redis32", redis32.get()},
        std::pair{"redis4096", redis4096.get()}}) {
    for (const auto& [policy, scope] : kPolicies) {
      benchmark::RegisterBenchmark(
          absl::StrCat("BM_Scan/", policy, "/", name).c_str(), BM_Scan, state,
          scope);
    }
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_ScanSideBySide/", name).c_str(), BM_SideBySide,
        ScanKind{"full", state, ScanScope::kAllCpus},
        ScanKind{"visited", state, ScanScope::kVisitedCpus});
  }
  for (const auto& [policy, scope] : kPolicies) {
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_ScanScaling/", policy).c_str(), BM_SideBySide,
        ScanKind{"cpus4096", redis4096.get(), scope},
        ScanKind{"cpus384", redis384.get(), scope});
  }
  for (auto* state : {&redis384, &spread384, &redis32, &redis4096}) {
    states.push_back(std::move(*state));
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
