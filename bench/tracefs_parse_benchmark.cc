// The live collector's parse and conversion paths, in events per second on
// one core: RawEventParser over real ring-buffer sub-buffers of this host's
// kernel, alone (BM_ParseSubbuffers) and followed by what `schedcache
// record` does with the records (BM_ConvertSubbuffers: LiveConverter's
// merge by time, tgid look-ups and the switch-to-samples state machine, into
// a sink that counts).
// The sub-buffers are recorded once at start (1 s through TracefsSession and
// TracefsReader while two threads ping-pong through pipes, so there are
// many switches), then replayed from memory: the figure is the decode cost
// alone, without the read syscalls. Recording needs root and tracefs;
// without them the benchmark is skipped with the reason.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_main.h"
#include "benchmark/benchmark.h"
#include "common/status_macros.h"
#include "events/event_sink.h"
#include "collector/live_converter.h"
#include "collector/raw_event_parser.h"
#include "collector/sched_event.h"
#include "collector/tracefs_reader.h"
#include "collector/tracefs_session.h"

namespace schedcache {
namespace {

using host::RawSchedEvent;

struct RecordedSubbuffer {
  int cpu = -1;
  std::vector<std::uint8_t> bytes;
};

struct Recording {
  std::vector<RecordedSubbuffer> subbuffers;
  std::uint64_t events = 0;
};

// CountingSink counts and folds two fields into a checksum, so decoding
// cannot be optimised away.
class CountingSink : public host::SchedEventSink {
 public:
  void OnEvent(const RawSchedEvent& event) override {
    ++events;
    checksum += event.timestamp_ns ^ static_cast<std::uint64_t>(event.next_pid);
  }
  std::uint64_t events = 0;
  std::uint64_t checksum = 0;
};

// PingPong bounces a byte between two threads through two pipes until
// `end`: every bounce blocks one thread and wakes the other.
void PingPong(absl::Time end) {
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return;
  std::thread echo([&] {
    char byte;
    while (read(there[0], &byte, 1) == 1 && byte == 'p') {
      if (write(back[1], &byte, 1) != 1) break;
    }
  });
  char byte = 'p';
  while (absl::Now() < end) {
    if (write(there[1], &byte, 1) != 1 || read(back[0], &byte, 1) != 1) break;
  }
  byte = 'q';
  if (write(there[1], &byte, 1) != 1) close(there[1]);
  echo.join();
  for (const int fd : {there[0], there[1], back[0], back[1]}) close(fd);
}

absl::StatusOr<Recording> Record(absl::Duration duration) {
  if (geteuid() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "not root (euid ", geteuid(), "): a tracefs instance needs root"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<host::TracefsSession> session,
                   host::TracefsSession::Start({.buffer_size_kb = 16384}));
  ASSIGN_OR_RETURN(std::unique_ptr<host::TracefsReader> reader,
                   host::TracefsReader::Open(*session, {}));
  Recording recording;
  reader->set_subbuffer_tap(
      [&recording](int cpu, absl::Span<const std::uint8_t> subbuffer) {
        recording.subbuffers.push_back(
            {cpu,
             std::vector<std::uint8_t>(subbuffer.begin(), subbuffer.end())});
      });
  CountingSink sink;
  const absl::Time end = absl::Now() + duration;
  std::thread workload(PingPong, end);
  const absl::Status run = reader->Run(end, sink);
  workload.join();
  RETURN_IF_ERROR(run);
  RETURN_IF_ERROR(session->TurnOff());
  RETURN_IF_ERROR(reader->Drain(sink));
  ASSIGN_OR_RETURN(const host::RingBufferStats lost, session->ReadLostEvents());
  const host::ReaderCounters counters = reader->counters();
  reader.reset();
  RETURN_IF_ERROR(session->Stop());
  recording.events = counters.parse.events;
  std::fprintf(stderr,
               "tracefs_parse_benchmark: recorded %llu events in %zu "
               "sub-buffers; lost %llu, unparsed %llu\n",
               static_cast<unsigned long long>(recording.events),
               recording.subbuffers.size(),
               static_cast<unsigned long long>(lost.lost()),
               static_cast<unsigned long long>(counters.parse.unparsed));
  return recording;
}

void BM_ParseSubbuffers(benchmark::State& bench, const Recording* recording,
                        host::RawEventParser* parser) {
  CountingSink sink;
  std::uint64_t unparsed = 0;
  for (auto _ : bench) {
    for (const RecordedSubbuffer& subbuffer : recording->subbuffers) {
      const host::ParseCounts counts =
          parser->ParseSubbuffer(subbuffer.bytes, subbuffer.cpu, sink);
      unparsed += counts.unparsed + counts.unknown_type + counts.bad_subbuffers;
    }
  }
  benchmark::DoNotOptimize(sink.checksum);
  if (unparsed != 0) {
    bench.SkipWithError(
        absl::StrCat(unparsed, " records did not parse").c_str());
  }
  using benchmark::Counter;
  bench.counters["events_per_second"] =
      Counter(static_cast<double>(sink.events), Counter::kIsRate);
  bench.counters["events"] = Counter(static_cast<double>(recording->events));
}

// SampleCounter counts the model's events and folds their runtime into a
// checksum.
class SampleCounter : public EventSink {
 public:
  absl::Status OnSample(const Sample& sample) override {
    ++events;
    checksum += static_cast<std::uint64_t>(sample.delta_ns);
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    ++events;
    checksum += static_cast<std::uint64_t>(hand_over.tid);
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    ++events;
    checksum += static_cast<std::uint64_t>(exit.tgid);
    return absl::OkStatus();
  }
  absl::Status OnProcessStart(const ProcessStart& start) override {
    ++events;
    checksum += static_cast<std::uint64_t>(start.tgid);
    return absl::OkStatus();
  }
  std::uint64_t events = 0;
  std::uint64_t checksum = 0;
};

// MergeHorizon forwards records to the converter and keeps each CPU's
// latest time: every record before the smallest of them is in (each CPU's
// records come in order), which is the horizon the recorder's read rounds
// give in a live capture.
class MergeHorizon : public host::SchedEventSink {
 public:
  explicit MergeHorizon(host::LiveConverter& converter)
      : converter_(converter) {}
  void OnEvent(const RawSchedEvent& event) override {
    if (static_cast<std::size_t>(event.cpu) >= latest_.size()) {
      latest_.resize(event.cpu + 1, 0);
    }
    latest_[event.cpu] = event.timestamp_ns;
    converter_.OnEvent(event);
  }
  std::uint64_t horizon() const {
    std::uint64_t horizon = UINT64_MAX;
    for (const std::uint64_t t : latest_) horizon = std::min(horizon, t);
    return latest_.empty() ? 0 : horizon;
  }

 private:
  host::LiveConverter& converter_;
  std::vector<std::uint64_t> latest_;
};

// kSubbuffersPerRound is how many recorded sub-buffers make one read round
// of the converter (a Release): about one wake-up of the reader.
constexpr std::size_t kSubbuffersPerRound = 64;

void BM_ConvertSubbuffers(benchmark::State& bench, const Recording* recording,
                          host::RawEventParser* parser) {
  std::uint64_t records = 0;
  std::uint64_t late = 0;
  SampleCounter samples;
  for (auto _ : bench) {
    host::LiveConverter converter(/*hz=*/250, samples, /*trace=*/nullptr);
    MergeHorizon merge(converter);
    const std::vector<RecordedSubbuffer>& all = recording->subbuffers;
    for (std::size_t i = 0; i < all.size(); ++i) {
      parser->ParseSubbuffer(all[i].bytes, all[i].cpu, merge);
      if ((i + 1) % kSubbuffersPerRound == 0 &&
          !converter.Release(merge.horizon()).ok()) {
        bench.SkipWithError("release failed");
      }
    }
    if (!converter.Finish().ok()) bench.SkipWithError("finish failed");
    records += converter.converted() + converter.late();
    late += converter.late();
  }
  benchmark::DoNotOptimize(samples.checksum);
  using benchmark::Counter;
  bench.counters["events_per_second"] =
      Counter(static_cast<double>(records), Counter::kIsRate);
  bench.counters["late"] = Counter(static_cast<double>(late));
}

void BM_Unavailable(benchmark::State& bench, const std::string* reason) {
  for (auto _ : bench) {
  }
  bench.SkipWithError(reason->c_str());
}

// Inputs lives for the whole run: the benchmarks point into it.
struct Inputs {
  Recording recording;
  std::unique_ptr<host::RawEventParser> parser;
  std::string unavailable;
};

absl::Status RecordAndParse(Inputs& inputs) {
  ASSIGN_OR_RETURN(inputs.recording, Record(absl::Seconds(1)));
  ASSIGN_OR_RETURN(const std::string tracing_dir, host::EnsureTracefsMounted());
  ASSIGN_OR_RETURN(inputs.parser, host::RawEventParser::Load(tracing_dir));
  return absl::OkStatus();
}

void RegisterAll(Inputs& inputs) {
  if (absl::Status status = RecordAndParse(inputs); !status.ok()) {
    inputs.unavailable =
        absl::StrCat("cannot record sub-buffers: ", status.ToString());
    benchmark::RegisterBenchmark("BM_ParseSubbuffers/real", BM_Unavailable,
                                 &inputs.unavailable);
    benchmark::RegisterBenchmark("BM_ConvertSubbuffers/real", BM_Unavailable,
                                 &inputs.unavailable);
    return;
  }
  benchmark::RegisterBenchmark("BM_ParseSubbuffers/real", BM_ParseSubbuffers,
                               &inputs.recording, inputs.parser.get())
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ConvertSubbuffers/real",
                               BM_ConvertSubbuffers, &inputs.recording,
                               inputs.parser.get())
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  schedcache::Inputs inputs;
  return schedcache::RunBenchmarks(argc, argv,
                                   [&](const schedcache::BenchArgs&) {
                                     schedcache::RegisterAll(inputs);
                                     return absl::OkStatus();
                                   });
}
