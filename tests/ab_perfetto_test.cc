// `ab --perfetto` against the JSON report of the same run: the trace,
// decoded through the project's subset of Perfetto's .proto, has one
// process track per reported process (same tgid, same comm), one scan event
// per executed scan with the report's distribution of CPUs scanned, the
// preferred-LLC changes of every timeline the report keeps and each
// process's final LLC, and occupancy tracks for the busiest process.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/proto_json.h"
#include "eval/ab/ab_report.h"
#include "eval/ab/ab_runner.h"
#include "eval/report/perfetto_trace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "perfetto/trace_subset.pb.h"
#include "policies/builtin_policies.h"
#include "schedcache/v1/ab_report.pb.h"

namespace schedcache::ab {
namespace {

const PolicyRegistry& Registry() {
  static const PolicyRegistry* registry =
      new PolicyRegistry(*BuildPolicyRegistry({}));
  return *registry;
}

// Decoded is what a trace file holds, by track.
struct Decoded {
  std::map<int32_t, std::string> processes;            // pid -> name
  std::map<uint64_t, std::string> track_names;         // uuid -> name
  std::map<uint64_t, std::vector<int64_t>> scans;      // uuid -> cpus_scanned
  std::map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> counters;
};

// Decode reads `path` and checks what holds for every packet: one sequence
// whose first packet clears incremental state, and no event before its
// track's descriptor.
Decoded Decode(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromIstream(&in)) << path;
  EXPECT_GT(trace.packet_size(), 0);
  Decoded decoded;
  std::set<uint64_t> described;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const perfetto::TracePacket& packet = trace.packet(i);
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    EXPECT_EQ(packet.sequence_flags() != 0, i == 0);
    if (packet.has_track_descriptor()) {
      const perfetto::TrackDescriptor& track = packet.track_descriptor();
      EXPECT_TRUE(described.insert(track.uuid()).second) << track.uuid();
      decoded.track_names[track.uuid()] = track.name();
      if (track.has_process()) {
        decoded.processes[track.process().pid()] = track.process().process_name();
      }
      continue;
    }
    const perfetto::TrackEvent& event = packet.track_event();
    EXPECT_TRUE(described.contains(event.track_uuid())) << event.track_uuid();
    if (event.type() == perfetto::TrackEvent::TYPE_COUNTER) {
      decoded.counters[event.track_uuid()].emplace_back(
          static_cast<int64_t>(packet.timestamp()), event.counter_value());
    } else {
      EXPECT_EQ(event.debug_annotations(0).name(), "cpus_scanned");
      decoded.scans[event.track_uuid()].push_back(
          event.debug_annotations(0).int_value());
    }
  }
  return decoded;
}

struct Outputs {
  v1::AbReport report;  // read back from the JSON report
  Decoded trace;
};

Outputs RunBoth(AbOptions options, const std::string& name) {
  options.perfetto = absl::StrCat(::testing::TempDir(), "/", name, ".pftrace");
  absl::StatusOr<AbResult> result =
      RunAb(options, Registry(), InProcessSessions(Registry()));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  std::ostringstream json;
  EXPECT_TRUE(WriteJson(AbResultToProto(*result), json).ok());
  Outputs outputs{v1::AbReport(), Decode(options.perfetto)};
  EXPECT_TRUE(MessageFromJson(json.str(), outputs.report).ok());
  return outputs;
}

// ExpectTheReportsNumbers checks the trace against the report, policy by
// policy and process by process.
void ExpectTheReportsNumbers(const Outputs& run) {
  std::map<int32_t, std::string> reported;
  for (const v1::AbProcess& p : run.report.processes()) {
    reported[p.tgid()] = p.comm();
  }
  EXPECT_EQ(run.trace.processes, reported);

  const auto& policies = run.report.policies();
  for (int i = 0; i < policies.size(); ++i) {
    const int policy = i;
    std::map<int64_t, uint64_t> histogram;
    uint64_t scans = 0;
    for (const auto& [tgid, name] : reported) {
      auto it = run.trace.scans.find(ScanTrackUuid(tgid, policy));
      if (it == run.trace.scans.end()) continue;
      for (int64_t cpus : it->second) ++histogram[cpus];
      scans += it->second.size();
    }
    EXPECT_EQ(scans, policies[i].report().scans()) << policy;
    std::map<int64_t, uint64_t> want;
    for (const v1::AbHistogramBin& bin : policies[i].cpus_scanned_histogram()) {
      want[bin.cpus_scanned()] = bin.scans();
    }
    EXPECT_EQ(histogram, want) << policies[i].report().policy();
  }

  for (const v1::AbProcess& p : run.report.processes()) {
    const int32_t tgid = p.tgid();
    for (int i = 0; i < policies.size(); ++i) {
      const std::string& name = policies[i].report().policy();
      auto it = run.trace.counters.find(
          PreferredLlcTrackUuid(tgid, i));
      const std::vector<std::pair<int64_t, int64_t>> values =
          it == run.trace.counters.end()
              ? std::vector<std::pair<int64_t, int64_t>>{}
              : it->second;
      EXPECT_EQ(values.empty() ? -1 : values.back().second,
                p.final_preferred_llc(i))
          << tgid << " " << name;
      if (p.preferred_llc_over_time().empty()) continue;
      std::vector<std::pair<int64_t, int64_t>> timeline;
      for (const v1::AbLlcChange& change :
           p.preferred_llc_over_time(i).changes()) {
        timeline.emplace_back(change.timestamp_ns(), change.llc());
      }
      EXPECT_EQ(values, timeline) << tgid << " " << name;
    }
  }
}

// ChangesOf counts the values on every process's `policy` counter.
uint64_t ChangesOf(const Outputs& run, int policy) {
  uint64_t changes = 0;
  for (const auto& [tgid, name] : run.trace.processes) {
    auto it = run.trace.counters.find(PreferredLlcTrackUuid(tgid, policy));
    if (it != run.trace.counters.end()) changes += it->second.size();
  }
  return changes;
}

// OccupancyTracksOf counts the process's occupancy tracks: their uuids
// come after its other tracks and before the next tgid's.
size_t OccupancyTracksOf(const Outputs& run, int32_t tgid) {
  const auto& names = run.trace.track_names;
  return std::distance(names.lower_bound(OccupancyTrackUuid(tgid, 0)),
                       names.lower_bound(ProcessTrackUuid(tgid + 1)));
}

TEST(AbPerfetto, RedisTraceHoldsWhatTheJsonReportSays) {
  AbOptions options;
  options.input.kind = AbInputSpec::Kind::kWorkload;
  options.input.workload = WorkloadKind::kRedis;
  options.workload.duration_ns = 200'000'000;
  const Outputs run = RunBoth(options, "redis");
  ASSERT_EQ(run.report.processes_size(), 2);
  ExpectTheReportsNumbers(run);
  // No process exits: every counter value is one of the report's changes.
  for (int i = 0; i < run.report.policies_size(); ++i) {
    EXPECT_EQ(ChangesOf(run, i),
              run.report.policies(i).report().preferred_llc_changes());
  }
  EXPECT_GT(run.report.policies(0).report().preferred_llc_changes(), 0u);
  // Both processes are among the busiest, and full-scan (the reference)
  // examines all 24 LLCs of the EPYC shape at every scan: 24 tracks each.
  for (const v1::AbProcess& p : run.report.processes()) {
    EXPECT_EQ(OccupancyTracksOf(run, p.tgid()), 24u) << p.tgid();
  }
}

// ManyProcesses is a sample CSV of 8 two-thread processes on 4 CPUs: at
// tick k CPU c runs process (k + 3c) % 8, so each tick the 4 CPUs run 4
// different processes; process i runs (i + 1) * 400 us per tick, so 107 is
// the busiest and 100 the least. 100 and 101 exit at the end.
std::string ManyProcesses() {
  std::string csv =
      "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
      "footprint_pages,comm\n";
  constexpr int64_t kTick = 4'000'000;
  constexpr int kTicks = 100;
  for (int k = 1; k <= kTicks; ++k) {
    for (int cpu = 0; cpu < 4; ++cpu) {
      const int i = (k + 3 * cpu) % 8;
      const int tgid = 100 + i;
      // The main thread first, so the process is named after it at once.
      const int tid = k <= 8 ? tgid : tgid + 1000 * (k % 2);
      absl::StrAppend(&csv, k * kTick, ",", cpu, ",", tgid, ",", tid, ",",
                      (i + 1) * 400'000, ",1,2,,,",
                      tid == tgid ? "proc" : "worker", i, "\n");
    }
  }
  for (int tgid : {100, 101}) {
    absl::StrAppend(&csv, (kTicks + 1) * kTick, ",,", tgid, ",,,,,,,\n");
  }
  return csv;
}

TEST(AbPerfetto, ManyProcessesTraceHoldsWhatTheJsonReportSays) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/many.csv");
  std::ofstream(path) << ManyProcesses();
  AbOptions options;
  options.input.kind = AbInputSpec::Kind::kCsv;
  options.input.path = path;
  options.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  const Outputs run = RunBoth(options, "many");
  ASSERT_EQ(run.report.processes_size(), 8);
  ExpectTheReportsNumbers(run);
  // Beyond the report's changes, the counters hold one change to none per
  // policy where an exiting process had a preference (the report does not
  // count those as the policy's changes).
  for (int i = 0; i < run.report.policies_size(); ++i) {
    uint64_t exits = 0;
    for (int tgid : {100, 101}) {
      auto it = run.trace.counters.find(
          PreferredLlcTrackUuid(tgid, i));
      if (it != run.trace.counters.end() &&
          it->second.back().first == 101 * 4'000'000) {
        ++exits;
      }
    }
    EXPECT_EQ(ChangesOf(run, i),
              run.report.policies(i).report().preferred_llc_changes() + exits);
  }
  // The busiest process (107) ran every tick of its share among the six
  // busiest: full-scan examined both LLCs of the synthetic machine.
  EXPECT_EQ(run.report.processes(0).tgid(), 107);
  EXPECT_EQ(OccupancyTracksOf(run, 107), 2u);
}

}  // namespace
}  // namespace schedcache::ab
