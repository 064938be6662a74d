#include "bench/bench_main.h"

#include <cstdio>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"

namespace schedcache {

int RunBenchmarks(int argc, char** argv,
                  const std::function<absl::Status(const BenchArgs&)>&
                      register_all) {
  benchmark::Initialize(&argc, argv);
  BenchArgs args;
  constexpr absl::string_view kStreamMs = "--stream_ms=";
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg.substr(0, kStreamMs.size()) == kStreamMs &&
        absl::SimpleAtoi(arg.substr(kStreamMs.size()), &args.stream_ms) &&
        args.stream_ms > 0) {
      continue;
    }
    std::fprintf(stderr, "%s: unknown or bad flag %s (ours: --stream_ms=N > 0)\n",
                 argv[0], argv[i]);
    return 2;
  }
  if (absl::Status status = register_all(args); !status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], status.ToString().c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace schedcache
