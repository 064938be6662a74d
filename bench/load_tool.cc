// schedcache_load: the load tool of bench/. Prints one JSON object per run.
//
//   schedcache_load --mode=ingest  [--server=ADDR | --schedcached=PATH]
//       --streams=S --batch=B --seconds=T --policies=full-scan,visited-scan
//       [--events_per_second=N] [--queries_per_second=Q]
//     S Ingest streams of columnar batches of B samples (and the
//     hand-overs between them) of a Redis-like stream on the 384-CPU shape
//     for T seconds, with Recommend and health-check latency from a
//     separate client at Q pairs a second. With its own schedcached it
//     reports the server's CPU time over the run (all threads), and, with
//     --reference_passes, the in-process engine's CPU time per sample on
//     the same stream in the same batches, the reference of the server's.
//   schedcache_load --mode=startup --schedcached=PATH [--repeat=N]
//     time from fork/exec of schedcached to its first SERVING health check.
//   schedcache_load --mode=memory --schedcached=PATH [--processes=N]
//     server RSS before and after N processes that ran on 16 CPUs each,
//     measured once every process has scanned under both policies.
// Without --server, ingest starts its own schedcached (--schedcached).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "bench/ingest_load.h"
#include "bench/redis_stream.h"
#include "bench/server_process.h"
#include "common/flags_usage.h"
#include "common/status_macros.h"
#include "schedcache/client.h"
#include "topology/topology_source.h"

ABSL_FLAG(std::string, mode, "ingest", "ingest, startup or memory");
ABSL_FLAG(std::string, server, "", "a running server (unix:PATH, HOST:PORT)");
ABSL_FLAG(std::string, schedcached, "schedcached",
          "the schedcached binary to start when --server is empty");
ABSL_FLAG(int, streams, 1, "concurrent Ingest streams (one session each)");
ABSL_FLAG(int, batch, 1024,
          "samples per Ingest batch, plus the hand-overs between them");
ABSL_FLAG(double, seconds, 5, "how long the ingest load runs");
ABSL_FLAG(std::vector<std::string>, policies,
          std::vector<std::string>({"full-scan", "visited-scan"}),
          "policies of each ingest session");
ABSL_FLAG(double, events_per_second, 0, "ingest rate cap, all streams; 0: none");
ABSL_FLAG(double, queries_per_second, 200,
          "Recommend + health-check pairs a second during ingest; 0: none");
ABSL_FLAG(int, stream_ms, 200, "simulated length of the recorded stream");
ABSL_FLAG(int, reference_passes, 10,
          "passes of the stream through an in-process engine, same policies "
          "and batches, timed as the reference of the server's CPU per "
          "sample; 0: none");
ABSL_FLAG(int, repeat, 5, "start-ups to time");
ABSL_FLAG(int, processes, 100'000, "processes to track for --mode=memory");

namespace schedcache {
namespace {

std::string LatencyJson(const char* name, const LatencySummary& s) {
  return absl::StrFormat(
      "\"%s_count\":%d,\"%s_p50_us\":%.1f,\"%s_p99_us\":%.1f,"
      "\"%s_p999_us\":%.1f,\"%s_max_us\":%.1f",
      name, s.count, name, s.p50_us, name, s.p99_us, name, s.p999_us, name,
      s.max_us);
}

// CpuJson is the CPU side of an ingest run: the server's CPU time (all its
// threads; only when this tool started it), this tool's own (the load
// generator's), and the in-process engine's per sample on the same stream
// (only with --reference_passes).
std::string CpuJson(const IngestLoadResult& r, absl::optional<absl::Duration>
                    server_cpu, absl::Duration load_cpu,
                    absl::optional<absl::Duration> engine_per_sample) {
  const double samples = static_cast<double>(r.samples_sent);
  std::string out = absl::StrFormat(",\"load_cpu_seconds\":%.3f",
                                    absl::ToDoubleSeconds(load_cpu));
  if (server_cpu.has_value()) {
    absl::StrAppendFormat(
        &out, ",\"server_cpu_seconds\":%.3f,\"server_cores\":%.3f,"
        "\"server_cpu_ns_per_sample\":%.1f",
        absl::ToDoubleSeconds(*server_cpu),
        absl::FDivDuration(*server_cpu, r.elapsed),
        absl::ToDoubleNanoseconds(*server_cpu) / samples);
  }
  if (engine_per_sample.has_value()) {
    absl::StrAppendFormat(&out, ",\"engine_cpu_ns_per_sample\":%.1f",
                          absl::ToDoubleNanoseconds(*engine_per_sample));
  }
  return out;
}

// ProcessCpuTime is this process's CPU time, all threads.
absl::Duration ProcessCpuTime() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return absl::DurationFromTimeval(usage.ru_utime) +
         absl::DurationFromTimeval(usage.ru_stime);
}

absl::Status Ingest() {
  std::unique_ptr<ServerProcess> server;
  std::string address = absl::GetFlag(FLAGS_server);
  if (address.empty()) {
    ASSIGN_OR_RETURN(server, ServerProcess::Start(absl::GetFlag(FLAGS_schedcached),
                                                  {}, absl::Seconds(10)));
    address = server->address();
  }
  ASSIGN_OR_RETURN(
      RecordedStream stream,
      RecordStream(kEpyc9654Shape,
                   RedisOptions(int64_t{absl::GetFlag(FLAGS_stream_ms)} *
                                1'000'000)));
  IngestLoadOptions options;
  options.address = address;
  options.streams = absl::GetFlag(FLAGS_streams);
  options.batch_samples = absl::GetFlag(FLAGS_batch);
  options.duration = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  options.policies = absl::GetFlag(FLAGS_policies);
  options.topology = std::string(kEpyc9654Shape);
  options.events_per_second = absl::GetFlag(FLAGS_events_per_second);
  options.queries_per_second = absl::GetFlag(FLAGS_queries_per_second);
  absl::optional<absl::Duration> engine_per_sample;
  if (const int passes = absl::GetFlag(FLAGS_reference_passes); passes > 0) {
    ASSIGN_OR_RETURN(engine_per_sample,
                     EngineCpuPerSample(stream, options.policies,
                                        options.batch_samples, passes));
  }
  absl::Duration server_cpu_before;
  if (server != nullptr) {
    ASSIGN_OR_RETURN(server_cpu_before, server->CpuTime());
  }
  const absl::Duration load_cpu_before = ProcessCpuTime();
  ASSIGN_OR_RETURN(IngestLoadResult r, RunIngestLoad(stream, options));
  const absl::Duration load_cpu = ProcessCpuTime() - load_cpu_before;
  absl::optional<absl::Duration> server_cpu;
  if (server != nullptr) {
    ASSIGN_OR_RETURN(const absl::Duration after, server->CpuTime());
    server_cpu = after - server_cpu_before;
  }
  const double seconds = absl::ToDoubleSeconds(r.elapsed);
  std::printf(
      "{\"mode\":\"ingest\",\"policies\":\"%s\",\"streams\":%d,\"batch\":%d,"
      "\"seconds\":%.3f,\"events_sent\":%lld,\"samples_sent\":%lld,"
      "\"accepted\":%lld,\"rejected\":%lld,\"events_per_second\":%.0f,"
      "\"samples_per_second\":%.0f,%s,%s,\"query_errors\":%lld%s}\n",
      absl::StrJoin(options.policies, "+").c_str(), options.streams,
      options.batch_samples, seconds, static_cast<long long>(r.events_sent),
      static_cast<long long>(r.samples_sent), static_cast<long long>(r.accepted),
      static_cast<long long>(r.rejected),
      static_cast<double>(r.accepted) / seconds,
      static_cast<double>(r.samples_sent) / seconds,
      LatencyJson("recommend", r.recommend).c_str(),
      LatencyJson("health", r.health).c_str(),
      static_cast<long long>(r.query_errors),
      CpuJson(r, server_cpu, load_cpu, engine_per_sample).c_str());
  return server == nullptr ? absl::OkStatus() : server->Stop();
}

absl::Status Startup() {
  std::vector<double> ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_repeat); ++i) {
    ASSIGN_OR_RETURN(std::unique_ptr<ServerProcess> server,
                     ServerProcess::Start(absl::GetFlag(FLAGS_schedcached),
                                          {"--topology=host"},
                                          absl::Seconds(10)));
    ms.push_back(absl::ToDoubleMilliseconds(server->ready_after()));
    RETURN_IF_ERROR(server->Stop());
  }
  std::sort(ms.begin(), ms.end());
  std::printf(
      "{\"mode\":\"startup\",\"repeat\":%zu,\"ready_ms_min\":%.1f,"
      "\"ready_ms_median\":%.1f,\"ready_ms_max\":%.1f}\n",
      ms.size(), ms.front(), ms[ms.size() / 2], ms.back());
  return absl::OkStatus();
}

// SendMemoryPass sends one pass over `processes` processes of 2 threads,
// each running 16 samples on the 16 CPUs of one LLC (the LLC varies by
// process), the last a tick, 1 us apart from `start_ns` on.
absl::Status SendMemoryPass(const client::Client& client, int processes,
                            int64_t start_ns) {
  auto writer = client.StartIngest("memory");
  int64_t now = start_ns;
  for (int p = 0; p < processes; ++p) {
    const int32_t tgid = 10 + p * 4;
    const int first_cpu = (p % 24) * 16;
    for (int k = 0; k < 16; ++k) {
      Sample s;
      s.timestamp_ns = now += 1000;
      s.cpu = first_cpu + k;
      s.tgid = tgid;
      s.tid = tgid + k % 2;
      s.delta_ns = 100'000;
      s.tick = k == 15;
      s.nr_threads = 2;
      RETURN_IF_ERROR(writer->Add(s));
    }
  }
  ASSIGN_OR_RETURN(v1::IngestSummary summary, writer->Finish());
  if (summary.rejected() != 0) {
    return absl::InternalError(absl::StrCat(
        "the server rejected ", summary.rejected(), " of ",
        summary.accepted() + summary.rejected(), " memory samples"));
  }
  return absl::OkStatus();
}

// ExecutedScans is the number of executed scans of each policy of the
// "memory" session, in session order.
absl::StatusOr<std::vector<uint64_t>> ExecutedScans(
    const client::Client& client) {
  ASSIGN_OR_RETURN(v1::Report report, client.GetReport("memory"));
  std::vector<uint64_t> scans;
  for (const v1::PolicyReport& policy : report.policies()) {
    scans.push_back(policy.scans());
  }
  return scans;
}

// Memory measures the server's RSS growth for N tracked processes once
// every one holds a scan's evidence, as in a live session. The first pass
// starts each process: its tick falls in the epoch the process started
// in, so it mostly triggers no scan (kernel task_tick_cache). The second
// pass, two epochs later, runs each process again on the same CPUs, so
// its tick falls in a later epoch and scans under both policies; the
// server's scan counts prove it (each policy executes exactly N scans in
// that pass, or the run fails).
absl::Status Memory() {
  const int processes = absl::GetFlag(FLAGS_processes);
  ASSIGN_OR_RETURN(
      std::unique_ptr<ServerProcess> server,
      ServerProcess::Start(absl::GetFlag(FLAGS_schedcached),
                           {absl::StrCat("--max_processes=", processes)},
                           absl::Seconds(10)));
  client::Options client_options;
  client_options.address = server->address();
  auto client = client::Client::Connect(client_options);
  v1::CreateSessionRequest request;
  request.set_name("memory");
  request.mutable_topology()->set_spec(std::string(kEpyc9654Shape));
  request.add_policies("full-scan");
  request.add_policies("visited-scan");
  request.set_trigger(v1::SCAN_TRIGGER_TICK);
  RETURN_IF_ERROR(client->CreateSession(request).status());
  ASSIGN_OR_RETURN(const int64_t rss_before, server->RssBytes());
  constexpr int64_t kFirstPassNs = 1'000'000'000;
  RETURN_IF_ERROR(SendMemoryPass(*client, processes, kFirstPassNs));
  ASSIGN_OR_RETURN(const std::vector<uint64_t> scans_first,
                   ExecutedScans(*client));
  // The second pass starts more than two of the session's epochs (the
  // default, 2 jiffies at HZ 250: 8 ms) after the first ended.
  const int64_t second_pass_ns =
      kFirstPassNs + int64_t{processes} * 16 * 1000 + 20'000'000;
  RETURN_IF_ERROR(SendMemoryPass(*client, processes, second_pass_ns));
  ASSIGN_OR_RETURN(const std::vector<uint64_t> scans_second,
                   ExecutedScans(*client));
  for (size_t i = 0; i < scans_second.size(); ++i) {
    const uint64_t scanned = scans_second[i] - scans_first[i];
    if (scanned != static_cast<uint64_t>(processes)) {
      return absl::InternalError(absl::StrCat(
          "policy ", request.policies(i), " executed ", scanned,
          " scans in the second pass, not one per process (", processes,
          "): the memory figure would miss scan evidence"));
    }
  }
  ASSIGN_OR_RETURN(v1::Session session, client->GetSession("memory"));
  ASSIGN_OR_RETURN(const int64_t rss_after, server->RssBytes());
  const double tracked = static_cast<double>(session.processes_tracked());
  std::printf(
      "{\"mode\":\"memory\",\"processes\":%llu,"
      "\"scans_per_process_min\":%.2f,"
      "\"rss_before_mib\":%.1f,\"rss_after_mib\":%.1f,"
      "\"bytes_per_process\":%.0f}\n",
      static_cast<unsigned long long>(session.processes_tracked()),
      tracked > 0 ? static_cast<double>(*std::min_element(
                        scans_second.begin(), scans_second.end())) /
                        tracked
                  : 0,
      static_cast<double>(rss_before) / (1 << 20),
      static_cast<double>(rss_after) / (1 << 20),
      tracked > 0 ? static_cast<double>(rss_after - rss_before) / tracked : 0);
  return server->Stop();
}

}  // namespace
}  // namespace schedcache

int main(int argc, char** argv) {
  schedcache::SetFlagsUsage(
      "the load tool of bench/: ingest throughput with query latency, "
      "start-up time, or memory per process of schedcached; prints one JSON "
      "object.\nUsage: schedcache_load --mode=ingest|startup|memory "
      "[--server=ADDR | --schedcached=PATH] [flags]",
      "bench/load_tool.cc");
  absl::ParseCommandLine(argc, argv);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  absl::Status status;
  if (mode == "ingest") {
    status = schedcache::Ingest();
  } else if (mode == "startup") {
    status = schedcache::Startup();
  } else if (mode == "memory") {
    status = schedcache::Memory();
  } else {
    std::fprintf(stderr, "schedcache_load: unknown --mode=%s\n", mode.c_str());
    return 2;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "schedcache_load: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
