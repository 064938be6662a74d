// Trace parsing benchmarks, in lines per second over text held in memory:
//  - BM_ParseTraceLine: ParseTraceLine alone, line by line;
//  - BM_ReplayTrace: ReplayTraceText (parse, the scheduler state machine and
//    sample emission) into a sink that only counts.
// Inputs: the real redis-benchmark ftrace capture from ../shared/data when
// present ("real"), and always a synthetic sched_switch trace ("synthetic")
// so the benchmark runs from a clean clone.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_main.h"
#include "benchmark/benchmark.h"
#include "trace/trace_line.h"
#include "trace/trace_replay.h"
#include "zlib.h"

namespace schedcache {
namespace {

class CountingSink : public EventSink {
 public:
  absl::Status OnSample(const Sample&) override {
    ++events_;
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver&) override {
    ++events_;
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit&) override {
    ++events_;
    return absl::OkStatus();
  }
  absl::Status OnProcessStart(const ProcessStart&) override {
    ++events_;
    return absl::OkStatus();
  }
  int64_t events() const { return events_; }

 private:
  int64_t events_ = 0;
};

// SyntheticTrace is `lines` sched_switch lines of the tgid-column ftrace
// layout: threads of two processes trading 4 CPUs every 20 us.
std::string SyntheticTrace(int lines) {
  std::string text = "# tracer: nop\n";
  const char* comms[] = {"redis-server", "redis-benchmark"};
  for (int i = 0; i < lines; ++i) {
    const int cpu = i % 4;
    const int prev = 1000 + (i % 8);
    const int next = 1000 + ((i + 3) % 8);
    const int64_t us = 1'000'000 + int64_t{i} * 20;
    absl::StrAppendFormat(
        &text,
        "%16s-%-7d (%7d) [%03d] d..2. %5d.%06d: sched_switch: prev_comm=%s "
        "prev_pid=%d prev_prio=120 prev_state=S ==> next_comm=%s next_pid=%d "
        "next_prio=120\n",
        comms[prev % 2], prev, 1000 + prev % 2 * 1000, cpu, us / 1'000'000,
        us % 1'000'000, comms[prev % 2], prev, comms[next % 2], next);
  }
  return text;
}

// ReadGzip returns the text of a gzip file, or "" when it cannot be read.
std::string ReadGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  std::string text;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  gzclose(file);
  return n < 0 ? "" : text;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

void BM_ParseTraceLine(benchmark::State& bench, const std::string* text) {
  const std::vector<std::string_view> lines = SplitLines(*text);
  int64_t switches = 0;
  for (auto _ : bench) {
    for (std::string_view line : lines) {
      const TraceLine parsed = ParseTraceLine(line);
      switches += parsed.kind == TraceLine::Kind::kSwitch;
      benchmark::DoNotOptimize(parsed);
    }
  }
  using benchmark::Counter;
  bench.counters["lines_per_second"] = Counter(
      static_cast<double>(lines.size()) * bench.iterations(), Counter::kIsRate);
  bench.counters["switch_lines"] =
      Counter(static_cast<double>(switches), Counter::kAvgIterations);
}

void BM_ReplayTrace(benchmark::State& bench, const std::string* text) {
  int64_t lines = 0;
  int64_t events = 0;
  for (auto _ : bench) {
    CountingSink sink;
    absl::StatusOr<ReplayStats> stats =
        ReplayTraceText(*text, TraceOptions{}, sink);
    if (!stats.ok()) {
      bench.SkipWithError(stats.status().ToString().c_str());
      return;
    }
    lines += stats->lines;
    events += sink.events();
  }
  using benchmark::Counter;
  bench.counters["lines_per_second"] =
      Counter(static_cast<double>(lines), Counter::kIsRate);
  bench.counters["events_per_second"] =
      Counter(static_cast<double>(events), Counter::kIsRate);
}

absl::Status RegisterAll(std::vector<std::unique_ptr<std::string>>& texts) {
  std::vector<std::pair<std::string, std::unique_ptr<std::string>>> inputs;
  inputs.emplace_back("synthetic",
                      std::make_unique<std::string>(SyntheticTrace(100'000)));
#ifdef SCHEDCACHE_SHARED_DATA_DIR
  std::string real = ReadGzip(std::string(SCHEDCACHE_SHARED_DATA_DIR) +
                              "/traces/redis-benchmark.trace.gz");
  if (real.empty()) {
    std::fprintf(stderr, "trace_benchmark: no shared data; real trace skipped\n");
  } else {
    inputs.emplace_back("real", std::make_unique<std::string>(std::move(real)));
  }
#endif
  for (auto& [name, text] : inputs) {
    benchmark::RegisterBenchmark(
        absl::StrCat("BM_ParseTraceLine/", name).c_str(), BM_ParseTraceLine,
        text.get())->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(absl::StrCat("BM_ReplayTrace/", name).c_str(),
                                 BM_ReplayTrace, text.get())
        ->Unit(benchmark::kMillisecond);
    texts.push_back(std::move(text));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<std::string>> texts;
  return schedcache::RunBenchmarks(
      argc, argv, [&](const schedcache::BenchArgs&) {
        return schedcache::RegisterAll(texts);
      });
}
