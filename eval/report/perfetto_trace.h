// Writer of `schedcache ab --perfetto FILE`: the evaluation as a Perfetto
// trace in Perfetto's native protobuf format (the messages of
// proto/perfetto/trace_subset.proto), which ui.perfetto.dev and
// trace_processor open. The file is a stream of TracePackets, each written
// as one `packet` field of Trace as its event arrives, so no scan is held
// in memory; the writer keeps only which tracks exist and the last
// occupancy value of each LLC track.
//
// Tracks, per traced process (uuids: the tgid in the high 32 bits, the
// track's kind below):
//   - the process track (ProcessDescriptor pid and process_name);
//   - under it, per policy: "<policy> preferred LLC", a counter whose value
//     is the preferred LLC id (-1: none) from each change on, and
//     "<policy> scans", an instant event "scan" per executed scan with
//     debug annotations cpus_scanned, llcs_scanned, scan_ns, cpu and tid;
//   - under it, for the processes the caller picks: "LLC <id> occupancy",
//     a counter of the process's summed occupancy of that LLC (NICE_0_LOAD
//     fixed point, 1048576 = one CPU's worth), written when it changes.
// A process's tracks are described just before its first event (Perfetto
// needs a track's descriptor before the events on it), named by the comm
// the caller gives then.
//
// Every packet is on trusted_packet_sequence_id 1; the first one says that
// incremental state is cleared (none is used: no interning, no defaults).
// Timestamps are the input's own nanoseconds, stamped
// BUILTIN_CLOCK_BOOTTIME, Perfetto's default trace clock, so no
// ClockSnapshot is needed and trace_processor shows them unconverted.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVAL_REPORT_PERFETTO_TRACE_H_
#define SCHEDCACHE_EVAL_REPORT_PERFETTO_TRACE_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "eval/report/scan_event.h"
#include "perfetto/trace_subset.pb.h"

namespace schedcache {

// TracedProcess is the process an event belongs to, as the report names it.
struct TracedProcess {
  int32_t tgid = 0;
  absl::string_view comm;
};

// The uuids of a process's tracks (see above), for readers and tests.
uint64_t ProcessTrackUuid(int32_t tgid);
uint64_t PreferredLlcTrackUuid(int32_t tgid, int policy);
uint64_t ScanTrackUuid(int32_t tgid, int policy);
uint64_t OccupancyTrackUuid(int32_t tgid, int llc);

class PerfettoTraceWriter {
 public:
  // Open creates (truncating) `path` for an evaluation of `policies`, in
  // session order. Returns InvalidArgument for no policies, and the open
  // error (NotFound, PermissionDenied, ...) naming the file.
  static absl::StatusOr<PerfettoTraceWriter> Open(absl::string_view path,
                                                  std::vector<std::string> policies);

  // WriteScan writes `event` as an instant event on its policy's scan
  // track. Returns InvalidArgument naming the field for an event.policy out
  // of range, a negative timestamp or a tgid that is not > 0; DataLoss when
  // the file cannot be written.
  absl::Status WriteScan(const TracedProcess& process, const ScanEvent& event);

  // WriteOccupancy writes each of event.llc_occupancy whose value differs
  // from the last one written for that process and LLC. Errors as
  // WriteScan, and InvalidArgument for a negative LLC id or an occupancy
  // over INT64_MAX.
  absl::Status WriteOccupancy(const TracedProcess& process,
                              const ScanEvent& event);

  // WriteLlcChange writes `change` on the preferred-LLC counter of
  // `policy`. Errors as WriteScan.
  absl::Status WriteLlcChange(const TracedProcess& process, int policy,
                              const LlcChange& change);

  // WriteProcess describes the process's tracks at `timestamp_ns` unless an
  // event already did, so a process with no event still has its track.
  // Errors as WriteScan.
  absl::Status WriteProcess(const TracedProcess& process, int64_t timestamp_ns);

  // Close flushes and closes the file; DataLoss when that fails.
  absl::Status Close();

  const std::string& path() const { return path_; }

 private:
  // ProcessTracks is what the writer remembers of one process.
  struct ProcessTracks {
    // Last occupancy written per LLC id; kNotWritten before the first,
    // whose track is described with it.
    std::vector<int64_t> occupancy;
  };

  PerfettoTraceWriter() = default;

  // TracksOf returns the process's record, describing its tracks first
  // when it has none (on failure, the record stays absent).
  absl::StatusOr<ProcessTracks*> TracksOf(const TracedProcess& process,
                                          int64_t timestamp_ns);
  absl::Status DescribeTrack(int64_t timestamp_ns, uint64_t uuid,
                             uint64_t parent_uuid, const std::string& name,
                             bool counter);
  absl::Status WriteCounter(int64_t timestamp_ns, uint64_t uuid, int64_t value);
  // Emit writes packet_ with `timestamp_ns` and the sequence fields, then
  // clears it.
  absl::Status Emit(int64_t timestamp_ns);

  std::string path_;
  std::vector<std::string> policies_;
  std::unique_ptr<std::ofstream> out_;
  perfetto::TracePacket packet_;  // reused: one allocation for every packet
  std::string bytes_;             // packet_ serialized, reused likewise
  bool first_packet_ = true;
  absl::flat_hash_map<int32_t, ProcessTracks> processes_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVAL_REPORT_PERFETTO_TRACE_H_
