// BenchMain: the shared main() of the Google Benchmark binaries of bench/.
// Inputs are built once in main (no static state) and benchmarks are
// registered with lambdas that capture them.
//
// Thread contract: call from main only.
#ifndef SCHEDCACHE_BENCH_BENCH_MAIN_H_
#define SCHEDCACHE_BENCH_BENCH_MAIN_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace schedcache {

// BenchArgs are the flags of ours that a benchmark binary takes beside
// Google Benchmark's own.
struct BenchArgs {
  // stream_ms is the simulated length of the recorded Redis-like stream.
  int64_t stream_ms = 200;
};

// RunBenchmarks parses Google Benchmark's flags and ours (--stream_ms=N),
// calls `register_all` to build inputs and register benchmarks, then runs
// them. Returns main's exit code: 2 for an unknown flag, 1 when
// `register_all` fails (its error is printed), else 0.
int RunBenchmarks(int argc, char** argv,
                  const std::function<absl::Status(const BenchArgs&)>&
                      register_all);

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_BENCH_MAIN_H_
