#include "eval/report/perfetto_trace.h"

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace schedcache {
namespace {

using ::google::protobuf::internal::WireFormatLite;
using ::google::protobuf::io::CodedOutputStream;

// kSequenceId: every packet comes from this one writer, so one sequence.
constexpr uint32_t kSequenceId = 1;
// The low 32 bits of a uuid: the process track, then two tracks per policy,
// then (from kOccupancyBase) one per LLC.
constexpr uint64_t kOccupancyBase = uint64_t{1} << 31;
constexpr int64_t kNotWritten = -1;  // occupancies are never negative

uint64_t Uuid(int32_t tgid, uint64_t local) {
  return static_cast<uint64_t>(static_cast<uint32_t>(tgid)) << 32 | local;
}

absl::Status CheckEvent(absl::string_view what, int32_t tgid,
                        int64_t timestamp_ns) {
  if (tgid <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("perfetto trace: ", what, " tgid ", tgid, " is not > 0"));
  }
  if (timestamp_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "perfetto trace: ", what, " timestamp_ns ", timestamp_ns,
        " is negative"));
  }
  return absl::OkStatus();
}

void Annotate(perfetto::TrackEvent& event, const char* name, int64_t value) {
  perfetto::DebugAnnotation& annotation = *event.add_debug_annotations();
  annotation.set_name(name);
  annotation.set_int_value(value);
}

}  // namespace

uint64_t ProcessTrackUuid(int32_t tgid) { return Uuid(tgid, 0); }
uint64_t PreferredLlcTrackUuid(int32_t tgid, int policy) {
  return Uuid(tgid, 1 + 2 * static_cast<uint64_t>(policy));
}
uint64_t ScanTrackUuid(int32_t tgid, int policy) {
  return Uuid(tgid, 2 + 2 * static_cast<uint64_t>(policy));
}
uint64_t OccupancyTrackUuid(int32_t tgid, int llc) {
  return Uuid(tgid, kOccupancyBase + static_cast<uint64_t>(llc));
}

absl::StatusOr<PerfettoTraceWriter> PerfettoTraceWriter::Open(
    absl::string_view path, std::vector<std::string> policies) {
  if (policies.empty()) {
    return absl::InvalidArgumentError("perfetto trace: no policies");
  }
  PerfettoTraceWriter writer;
  writer.path_ = std::string(path);
  writer.policies_ = std::move(policies);
  writer.out_ = std::make_unique<std::ofstream>(
      writer.path_, std::ios::binary | std::ios::trunc);
  if (!*writer.out_) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("perfetto trace: cannot open ",
                                     writer.path_, ": ", std::strerror(error)));
  }
  return writer;
}

absl::Status PerfettoTraceWriter::Emit(int64_t timestamp_ns) {
  packet_.set_timestamp(static_cast<uint64_t>(timestamp_ns));
  packet_.set_timestamp_clock_id(perfetto::BUILTIN_CLOCK_BOOTTIME);
  packet_.set_trusted_packet_sequence_id(kSequenceId);
  if (first_packet_) {
    packet_.set_sequence_flags(
        perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    packet_.set_first_packet_on_sequence(true);
    first_packet_ = false;
  }
  bytes_.clear();
  packet_.AppendToString(&bytes_);
  packet_.Clear();
  // The packet as field `packet` of Trace: its tag, its length, its bytes.
  // Two varints of 32 bits, at most 5 bytes each.
  uint8_t header[2 * 5];
  uint8_t* end = CodedOutputStream::WriteTagToArray(
      WireFormatLite::MakeTag(perfetto::Trace::kPacketFieldNumber,
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
      header);
  end = CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(bytes_.size()), end);
  out_->write(reinterpret_cast<const char*>(header), end - header);
  out_->write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  if (!*out_) {
    return absl::DataLossError(
        absl::StrCat("perfetto trace: writing ", path_, " failed"));
  }
  return absl::OkStatus();
}

absl::Status PerfettoTraceWriter::DescribeTrack(int64_t timestamp_ns,
                                                uint64_t uuid,
                                                uint64_t parent_uuid,
                                                const std::string& name,
                                                bool counter) {
  perfetto::TrackDescriptor& track = *packet_.mutable_track_descriptor();
  track.set_uuid(uuid);
  track.set_parent_uuid(parent_uuid);
  track.set_name(name);
  if (counter) track.mutable_counter();
  return Emit(timestamp_ns);
}

absl::StatusOr<PerfettoTraceWriter::ProcessTracks*>
PerfettoTraceWriter::TracksOf(const TracedProcess& process,
                              int64_t timestamp_ns) {
  if (auto it = processes_.find(process.tgid); it != processes_.end()) {
    return &it->second;
  }
  perfetto::TrackDescriptor& track = *packet_.mutable_track_descriptor();
  track.set_uuid(ProcessTrackUuid(process.tgid));
  perfetto::ProcessDescriptor& descriptor = *track.mutable_process();
  descriptor.set_pid(process.tgid);
  descriptor.set_process_name(std::string(process.comm));
  RETURN_IF_ERROR(Emit(timestamp_ns));
  const uint64_t parent = ProcessTrackUuid(process.tgid);
  for (size_t i = 0; i < policies_.size(); ++i) {
    const int policy = static_cast<int>(i);
    RETURN_IF_ERROR(DescribeTrack(
        timestamp_ns, PreferredLlcTrackUuid(process.tgid, policy), parent,
        absl::StrCat(policies_[i], " preferred LLC"), /*counter=*/true));
    RETURN_IF_ERROR(DescribeTrack(
        timestamp_ns, ScanTrackUuid(process.tgid, policy), parent,
        absl::StrCat(policies_[i], " scans"), /*counter=*/false));
  }
  return &processes_[process.tgid];
}

absl::Status PerfettoTraceWriter::WriteCounter(int64_t timestamp_ns,
                                               uint64_t uuid, int64_t value) {
  perfetto::TrackEvent& event = *packet_.mutable_track_event();
  event.set_type(perfetto::TrackEvent::TYPE_COUNTER);
  event.set_track_uuid(uuid);
  event.set_counter_value(value);
  return Emit(timestamp_ns);
}

absl::Status PerfettoTraceWriter::WriteScan(const TracedProcess& process,
                                            const ScanEvent& scan) {
  if (scan.policy < 0 || static_cast<size_t>(scan.policy) >= policies_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("perfetto trace: ScanEvent.policy ", scan.policy,
                     " is not in [0, ", policies_.size(), ")"));
  }
  RETURN_IF_ERROR(CheckEvent("scan", process.tgid, scan.timestamp_ns));
  RETURN_IF_ERROR(TracksOf(process, scan.timestamp_ns).status());
  perfetto::TrackEvent& event = *packet_.mutable_track_event();
  event.set_type(perfetto::TrackEvent::TYPE_INSTANT);
  event.set_track_uuid(ScanTrackUuid(process.tgid, scan.policy));
  event.set_name("scan");
  Annotate(event, "cpus_scanned", scan.cpus_scanned);
  Annotate(event, "llcs_scanned", scan.llcs_scanned);
  Annotate(event, "scan_ns", scan.scan_ns);
  Annotate(event, "cpu", scan.cpu);
  Annotate(event, "tid", scan.pid);
  return Emit(scan.timestamp_ns);
}

absl::Status PerfettoTraceWriter::WriteOccupancy(const TracedProcess& process,
                                                 const ScanEvent& scan) {
  RETURN_IF_ERROR(CheckEvent("scan", process.tgid, scan.timestamp_ns));
  for (const LlcOccupancy& llc : scan.llc_occupancy) {
    if (llc.llc < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("perfetto trace: occupancy of LLC ", llc.llc));
    }
    if (llc.occupancy >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("perfetto trace: occupancy ", llc.occupancy, " of LLC ",
                       llc.llc, " is over INT64_MAX"));
    }
  }
  ASSIGN_OR_RETURN(ProcessTracks* const tracks,
                   TracksOf(process, scan.timestamp_ns));
  for (const LlcOccupancy& llc : scan.llc_occupancy) {
    if (static_cast<size_t>(llc.llc) >= tracks->occupancy.size()) {
      tracks->occupancy.resize(llc.llc + 1, kNotWritten);
    }
    int64_t& last = tracks->occupancy[llc.llc];
    const auto value = static_cast<int64_t>(llc.occupancy);
    if (value == last) continue;
    const uint64_t uuid = OccupancyTrackUuid(process.tgid, llc.llc);
    if (last == kNotWritten) {
      RETURN_IF_ERROR(DescribeTrack(
          scan.timestamp_ns, uuid, ProcessTrackUuid(process.tgid),
          absl::StrCat("LLC ", llc.llc, " occupancy"), /*counter=*/true));
    }
    RETURN_IF_ERROR(WriteCounter(scan.timestamp_ns, uuid, value));
    last = value;
  }
  return absl::OkStatus();
}

absl::Status PerfettoTraceWriter::WriteLlcChange(const TracedProcess& process,
                                                 int policy,
                                                 const LlcChange& change) {
  if (policy < 0 || static_cast<size_t>(policy) >= policies_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("perfetto trace: LLC change of policy ", policy,
                     ", not in [0, ", policies_.size(), ")"));
  }
  RETURN_IF_ERROR(
      CheckEvent("LLC change", process.tgid, change.timestamp_ns));
  RETURN_IF_ERROR(TracksOf(process, change.timestamp_ns).status());
  return WriteCounter(change.timestamp_ns,
                      PreferredLlcTrackUuid(process.tgid, policy), change.llc);
}

absl::Status PerfettoTraceWriter::WriteProcess(const TracedProcess& process,
                                               int64_t timestamp_ns) {
  RETURN_IF_ERROR(CheckEvent("process", process.tgid, timestamp_ns));
  return TracksOf(process, timestamp_ns).status();
}

absl::Status PerfettoTraceWriter::Close() {
  out_->close();
  if (!*out_) {
    return absl::DataLossError(
        absl::StrCat("perfetto trace: writing ", path_, " failed"));
  }
  return absl::OkStatus();
}

}  // namespace schedcache
