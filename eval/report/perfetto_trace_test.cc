// The Perfetto writer, read back through the same .proto subset: the
// packets, their sequence fields, the tracks and the events on them.
#include "eval/report/perfetto_trace.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "eval/report/internal/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "perfetto/trace_subset.pb.h"

namespace schedcache {
namespace {

using report_internal::ReadFile;
using ::testing::HasSubstr;

constexpr int32_t kTgid = 42;
const TracedProcess kRedis{kTgid, "redis-server"};

std::string TempPath(absl::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

PerfettoTraceWriter MustOpen(const std::string& path) {
  absl::StatusOr<PerfettoTraceWriter> writer =
      PerfettoTraceWriter::Open(path, {"full-scan", "visited-scan"});
  EXPECT_TRUE(writer.ok()) << writer.status();
  return *std::move(writer);
}

perfetto::Trace MustRead(const std::string& path) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(ReadFile(path))) << path;
  return trace;
}

ScanEvent Scan(int policy, int64_t timestamp_ns,
               absl::Span<const LlcOccupancy> occupancy = {}) {
  ScanEvent scan;
  scan.policy = policy;
  scan.comm = "redis-server";
  scan.tgid = kTgid;
  scan.pid = 43;
  scan.cpu = 7;
  scan.timestamp_ns = timestamp_ns;
  scan.cpus_scanned = 384;
  scan.llcs_scanned = 24;
  scan.scan_ns = 1500;
  scan.llc_occupancy = occupancy;
  return scan;
}

TEST(PerfettoTraceWriter, DescribesAProcessBeforeItsFirstEventThenWritesIt) {
  const std::string path = TempPath("first_scan.pftrace");
  PerfettoTraceWriter writer = MustOpen(path);
  ASSERT_TRUE(writer.WriteScan(kRedis, Scan(1, 5'000)).ok());
  ASSERT_TRUE(writer.Close().ok());

  const perfetto::Trace trace = MustRead(path);
  // The process track, 2 tracks for each of the 2 policies, the scan.
  ASSERT_EQ(trace.packet_size(), 6);
  const perfetto::TrackDescriptor& process = trace.packet(0).track_descriptor();
  EXPECT_EQ(process.uuid(), ProcessTrackUuid(kTgid));
  EXPECT_EQ(process.process().pid(), kTgid);
  EXPECT_EQ(process.process().process_name(), "redis-server");
  const std::vector<std::pair<uint64_t, std::string>> children = {
      {PreferredLlcTrackUuid(kTgid, 0), "full-scan preferred LLC"},
      {ScanTrackUuid(kTgid, 0), "full-scan scans"},
      {PreferredLlcTrackUuid(kTgid, 1), "visited-scan preferred LLC"},
      {ScanTrackUuid(kTgid, 1), "visited-scan scans"}};
  for (size_t i = 0; i < children.size(); ++i) {
    const perfetto::TrackDescriptor& track = trace.packet(1 + i).track_descriptor();
    EXPECT_EQ(track.uuid(), children[i].first);
    EXPECT_EQ(track.name(), children[i].second);
    EXPECT_EQ(track.parent_uuid(), ProcessTrackUuid(kTgid));
    // Even entries are the preferred-LLC counters.
    EXPECT_EQ(track.has_counter(), i % 2 == 0) << track.name();
  }
  const perfetto::TrackEvent& scan = trace.packet(5).track_event();
  EXPECT_EQ(scan.type(), perfetto::TrackEvent::TYPE_INSTANT);
  EXPECT_EQ(scan.track_uuid(), ScanTrackUuid(kTgid, 1));
  EXPECT_EQ(scan.name(), "scan");
  std::vector<std::pair<std::string, int64_t>> annotations;
  for (const perfetto::DebugAnnotation& a : scan.debug_annotations()) {
    annotations.emplace_back(a.name(), a.int_value());
  }
  EXPECT_THAT(annotations,
              ::testing::ElementsAre(std::pair<std::string, int64_t>{"cpus_scanned", 384},
                                     std::pair<std::string, int64_t>{"llcs_scanned", 24},
                                     std::pair<std::string, int64_t>{"scan_ns", 1500},
                                     std::pair<std::string, int64_t>{"cpu", 7},
                                     std::pair<std::string, int64_t>{"tid", 43}));
}

TEST(PerfettoTraceWriter, ClearsIncrementalStateOnTheFirstPacketOnly) {
  const std::string path = TempPath("sequence.pftrace");
  PerfettoTraceWriter writer = MustOpen(path);
  ASSERT_TRUE(writer.WriteScan(kRedis, Scan(0, 1'000)).ok());
  ASSERT_TRUE(writer.WriteScan(kRedis, Scan(0, 2'000)).ok());
  ASSERT_TRUE(writer.Close().ok());

  const perfetto::Trace trace = MustRead(path);
  ASSERT_EQ(trace.packet_size(), 7);  // 5 descriptors, 2 scans
  for (int i = 0; i < trace.packet_size(); ++i) {
    const perfetto::TracePacket& packet = trace.packet(i);
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    EXPECT_EQ(packet.timestamp_clock_id(), perfetto::BUILTIN_CLOCK_BOOTTIME);
    const uint32_t cleared =
        i == 0 ? static_cast<uint32_t>(
                     perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)
               : 0;
    EXPECT_EQ(packet.sequence_flags(), cleared);
    EXPECT_EQ(packet.first_packet_on_sequence(), i == 0);
  }
  EXPECT_EQ(trace.packet(0).timestamp(), 1'000u);
  EXPECT_EQ(trace.packet(6).timestamp(), 2'000u);
}

TEST(PerfettoTraceWriter, WritesLlcChangesOnThePolicysCounter) {
  const std::string path = TempPath("changes.pftrace");
  PerfettoTraceWriter writer = MustOpen(path);
  ASSERT_TRUE(writer.WriteLlcChange(kRedis, 1, LlcChange{3'000, 5}).ok());
  ASSERT_TRUE(writer.WriteLlcChange(kRedis, 1, LlcChange{9'000, kNoPreferredLlc}).ok());
  // Described already: no packet.
  ASSERT_TRUE(writer.WriteProcess(kRedis, 10'000).ok());
  ASSERT_TRUE(writer.Close().ok());

  const perfetto::Trace trace = MustRead(path);
  ASSERT_EQ(trace.packet_size(), 7);  // 5 descriptors, 2 values
  for (int i : {5, 6}) {
    const perfetto::TrackEvent& value = trace.packet(i).track_event();
    EXPECT_EQ(value.type(), perfetto::TrackEvent::TYPE_COUNTER);
    EXPECT_EQ(value.track_uuid(), PreferredLlcTrackUuid(kTgid, 1));
  }
  EXPECT_EQ(trace.packet(5).track_event().counter_value(), 5);
  EXPECT_EQ(trace.packet(6).track_event().counter_value(), -1);
  EXPECT_EQ(trace.packet(6).timestamp(), 9'000u);
}

TEST(PerfettoTraceWriter, WritesAnOccupancyOnlyWhenItChanges) {
  const std::string path = TempPath("occupancy.pftrace");
  PerfettoTraceWriter writer = MustOpen(path);
  const std::vector<LlcOccupancy> first = {{0, 100}, {2, 0}};
  const std::vector<LlcOccupancy> second = {{0, 100}, {2, 50}};
  ASSERT_TRUE(writer.WriteOccupancy(kRedis, Scan(0, 1'000, first)).ok());
  ASSERT_TRUE(writer.WriteOccupancy(kRedis, Scan(0, 2'000, second)).ok());
  ASSERT_TRUE(writer.Close().ok());

  const perfetto::Trace trace = MustRead(path);
  // 5 process descriptors; at 1000 the LLC 0 and LLC 2 tracks, each with
  // its value; at 2000 only LLC 2's new value (LLC 0 stays 100).
  ASSERT_EQ(trace.packet_size(), 10);
  EXPECT_EQ(trace.packet(5).track_descriptor().name(), "LLC 0 occupancy");
  EXPECT_TRUE(trace.packet(5).track_descriptor().has_counter());
  EXPECT_EQ(trace.packet(6).track_event().counter_value(), 100);
  EXPECT_EQ(trace.packet(7).track_descriptor().uuid(), OccupancyTrackUuid(kTgid, 2));
  EXPECT_EQ(trace.packet(8).track_event().counter_value(), 0);
  EXPECT_EQ(trace.packet(9).track_event().track_uuid(), OccupancyTrackUuid(kTgid, 2));
  EXPECT_EQ(trace.packet(9).track_event().counter_value(), 50);
  EXPECT_EQ(trace.packet(9).timestamp(), 2'000u);
}

TEST(PerfettoTraceWriter, GivesEveryProcessAndTrackItsOwnUuid) {
  EXPECT_NE(ProcessTrackUuid(1), 0u);  // 0 is Perfetto's global track
  const std::vector<uint64_t> uuids = {
      ProcessTrackUuid(1),         ProcessTrackUuid(2),
      PreferredLlcTrackUuid(1, 0), ScanTrackUuid(1, 0),
      PreferredLlcTrackUuid(1, 1), ScanTrackUuid(1, 1),
      OccupancyTrackUuid(1, 0),    OccupancyTrackUuid(1, 1),
      OccupancyTrackUuid(2, 0)};
  for (size_t i = 0; i < uuids.size(); ++i) {
    for (size_t j = i + 1; j < uuids.size(); ++j) {
      EXPECT_NE(uuids[i], uuids[j]) << i << " " << j;
    }
  }
}

TEST(PerfettoTraceWriter, RejectsBadEventsNamingTheFieldAndWritesNothing) {
  const std::string path = TempPath("bad.pftrace");
  PerfettoTraceWriter writer = MustOpen(path);
  absl::Status policy = writer.WriteScan(kRedis, Scan(2, 1'000));
  EXPECT_EQ(policy.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(policy.message(), HasSubstr("ScanEvent.policy 2"));
  absl::Status time = writer.WriteLlcChange(kRedis, 0, LlcChange{-5, 1});
  EXPECT_EQ(time.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(time.message(), HasSubstr("timestamp_ns -5"));
  absl::Status tgid = writer.WriteProcess(TracedProcess{0, "idle"}, 1'000);
  EXPECT_THAT(tgid.message(), HasSubstr("tgid 0"));
  const std::vector<LlcOccupancy> negative = {{-1, 5}};
  absl::Status llc = writer.WriteOccupancy(kRedis, Scan(0, 1'000, negative));
  EXPECT_THAT(llc.message(), HasSubstr("LLC -1"));
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(ReadFile(path), "");
}

TEST(PerfettoTraceWriter, OpenNamesTheFileItCannotCreate) {
  absl::StatusOr<PerfettoTraceWriter> writer = PerfettoTraceWriter::Open(
      "/nonexistent-dir/x.pftrace", {"full-scan"});
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(writer.status().message(), HasSubstr("/nonexistent-dir/x.pftrace"));
  EXPECT_EQ(PerfettoTraceWriter::Open(TempPath("none.pftrace"), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace schedcache
