// Engine benchmarks: the in-process ingest path. Each iteration replays a
// recorded Redis-like stream (384-CPU EPYC shape) through a fresh engine
// (built outside the timed region), so samples_per_second is what one core
// applies: validation, account, ticks and scans included.
//  - BM_Replay/<policies>: tick trigger, as a live session;
//  - BM_Account/<policies>: query trigger, so no scan runs: account and the
//    engine's bookkeeping per sample.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/bench_main.h"
#include "bench/redis_stream.h"
#include "benchmark/benchmark.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

struct EngineInputs {
  RecordedStream stream;
  PolicyRegistry registry;
};

void BM_Engine(benchmark::State& bench, const EngineInputs* inputs,
               std::vector<std::string> policies, ScanTrigger trigger) {
  const RecordedStream& stream = inputs->stream;
  uint64_t scans = 0;
  uint64_t cpus_scanned = 0;
  for (auto _ : bench) {
    bench.PauseTiming();
    absl::StatusOr<std::unique_ptr<Engine>> engine =
        MakeEngine(stream.topology, inputs->registry, policies, trigger);
    if (!engine.ok()) {
      bench.SkipWithError(engine.status().ToString().c_str());
      return;
    }
    bench.ResumeTiming();
    if (absl::Status s = ReplayStream(stream, 0, **engine); !s.ok()) {
      bench.SkipWithError(s.ToString().c_str());
      return;
    }
    bench.PauseTiming();
    for (const PolicyReport& r : (*engine)->Report().policies) {
      scans += r.scans;
      cpus_scanned += static_cast<uint64_t>(
          r.cpus_scanned.mean * static_cast<double>(r.scans) + 0.5);
    }
    engine->reset();
    bench.ResumeTiming();
  }
  using benchmark::Counter;
  const double iterations = static_cast<double>(bench.iterations());
  bench.counters["samples_per_second"] = Counter(
      static_cast<double>(stream.samples) * iterations, Counter::kIsRate);
  bench.counters["events_per_second"] =
      Counter(static_cast<double>(stream.samples + stream.hand_overs) *
                  iterations,
              Counter::kIsRate);
  bench.counters["samples"] = static_cast<double>(stream.samples);
  bench.counters["scans"] = Counter(static_cast<double>(scans),
                                    Counter::kAvgIterations);
  bench.counters["cpus_scanned"] = Counter(static_cast<double>(cpus_scanned),
                                           Counter::kAvgIterations);
}

absl::Status RegisterAll(const BenchArgs& args,
                         std::unique_ptr<EngineInputs>& inputs) {
  ASSIGN_OR_RETURN(RecordedStream stream,
                   RecordStream(kEpyc9654Shape,
                                RedisOptions(args.stream_ms * 1'000'000)));
  ASSIGN_OR_RETURN(PolicyRegistry registry, BuildPolicyRegistry({}));
  inputs = std::make_unique<EngineInputs>(
      EngineInputs{std::move(stream), std::move(registry)});
  const std::vector<std::vector<std::string>> sets = {
      {"none"}, {"full-scan"}, {"visited-scan"}, {"full-scan", "visited-scan"}};
  for (const auto& [label, trigger] :
       {std::pair{"BM_Replay", ScanTrigger::kTick},
        std::pair{"BM_Account", ScanTrigger::kQuery}}) {
    for (const std::vector<std::string>& policies : sets) {
      benchmark::RegisterBenchmark(
          absl::StrCat(label, "/", absl::StrJoin(policies, "+")).c_str(),
          BM_Engine, inputs.get(), policies, trigger)
          ->Unit(benchmark::kMillisecond);
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  std::unique_ptr<schedcache::EngineInputs> inputs;
  return schedcache::RunBenchmarks(
      argc, argv, [&](const schedcache::BenchArgs& args) {
        return schedcache::RegisterAll(args, inputs);
      });
}
