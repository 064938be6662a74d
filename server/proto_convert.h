// Conversions between the engine's C++ values (policies/) and the API's
// messages (schedcache.v1). Reading an IngestBatch is on the ingest hot
// path: both of its forms (Event messages and EventColumns rows) become
// Sample, HandOver, ProcessExit and KernelDecision values on the stack, in
// one loop, and never allocate.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_SERVER_PROTO_CONVERT_H_
#define SCHEDCACHE_SERVER_PROTO_CONVERT_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "events/event.h"
#include "policies/decision.h"
#include "policies/engine.h"
#include "policies/tunables.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

// SampleFromEvent reads a sample event (handover and process_exit false).
Sample SampleFromEvent(const v1::Event& event);
// HandOverFromEvent reads a hand-over event (event.handover() is true).
HandOver HandOverFromEvent(const v1::Event& event);
// ProcessExitFromEvent reads a process-exit event (event.process_exit()).
ProcessExit ProcessExitFromEvent(const v1::Event& event);
// ProcessStartFromEvent reads a process-start event (event.process_start()).
ProcessStart ProcessStartFromEvent(const v1::Event& event);
// KernelDecisionFromEvent reads a kernel decision
// (event.has_kernel_decision()).
KernelDecision KernelDecisionFromEvent(const v1::Event& event);
// EventToProto is the Event message that the readers above read back as
// the value given (the form that python and grpcurl clients send).
v1::Event EventToProto(const Sample& sample);
v1::Event EventToProto(const HandOver& handover);
v1::Event EventToProto(const ProcessExit& exit);
v1::Event EventToProto(const ProcessStart& start);
v1::Event EventToProto(const KernelDecision& decision);

// UnreadableRow is an event of no kind: a row of EventColumns whose kind is
// not an EventKind, or an Event of two kinds (two of hand-over, process
// exit, process start and kernel decision). It is rejected with `reason`, like an event the engine refuses.
struct UnreadableRow {
  absl::Status reason;
};

// ClearColumns empties every column of `columns`, the attributes' too,
// keeping their storage for the next parse (proto3's Clear() would free the
// attributes message).
void ClearColumns(v1::EventColumns& columns);
// ColumnsEmpty is true when no column of `columns` holds a value: an
// emptied columns message carries nothing, present or not.
bool ColumnsEmpty(const v1::EventColumns& columns);

// BatchEventCount is the number of events of `batch`: Event messages or
// column rows.
int BatchEventCount(const v1::IngestBatch& batch);

// CheckBatchForm checks what reading the rows relies on: one form per
// batch, columns of equal length, attributes in increasing row order within
// the rows, one kernel_decisions entry per kernel decision row. InvalidArgument names the fields and their values.
absl::Status CheckBatchForm(const v1::IngestBatch& batch);

namespace proto_convert_internal {

// AttributeReader walks the SparseAttributes of checked columns along
// their rows.
class AttributeReader {
 public:
  explicit AttributeReader(const v1::SparseAttributes& attributes)
      : attributes_(attributes), next_row_(RowOfEntry(0)) {}

  // Read consumes the entry of `row`, if it has one, setting its fields in
  // `sample` (nullptr: a hand-over row, whose values are skipped). Rows
  // come in increasing order. Inline, with the entry's row at hand: most
  // rows have no entry, and a call per row was 7% of the server's
  // instructions.
  void Read(int row, Sample* sample) {
    if (static_cast<int64_t>(row) == next_row_) ReadEntry(sample);
  }

 private:
  // RowOfEntry is the row of entry `entry`, or -1 past the last.
  int64_t RowOfEntry(int entry) const {
    return entry < attributes_.row_size() ? int64_t{attributes_.row(entry)}
                                          : -1;
  }
  // ReadEntry consumes the next entry into `sample` (nullptr: skipped).
  void ReadEntry(Sample* sample) {
    const uint32_t fields = attributes_.fields(entry_++);
    next_row_ = RowOfEntry(entry_);
    Sample ignored;
    Sample& out = sample != nullptr ? *sample : ignored;
    if (fields & v1::ATTRIBUTE_BIT_NR_THREADS) {
      out.nr_threads = attributes_.nr_threads(nr_threads_++);
    }
    if (fields & v1::ATTRIBUTE_BIT_NUMA_NODE) {
      out.numa_node = attributes_.numa_node(numa_node_++);
    }
    if (fields & v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES) {
      out.footprint_pages = attributes_.footprint_pages(footprint_pages_++);
    }
    if (fields & v1::ATTRIBUTE_BIT_COMM) {
      const std::string& comm = attributes_.comm(comm_++);
      if (!comm.empty()) out.comm.Assign(comm);
    }
    if (fields & v1::ATTRIBUTE_BIT_JIFFIES) {
      out.jiffies = attributes_.jiffies(jiffies_++);
    }
  }

  const v1::SparseAttributes& attributes_;
  int entry_ = 0;
  int64_t next_row_;  // the row of entry_, -1 when none is left
  int nr_threads_ = 0;
  int numa_node_ = 0;
  int footprint_pages_ = 0;
  int comm_ = 0;
  int jiffies_ = 0;
};

}  // namespace proto_convert_internal

// KernelDecisionOfRow is entry `entry` of `columns`' kernel_decisions for
// a row at `timestamp_ns` (its time, cpu, tgid and tid from `row`).
// REQUIRES: CheckBatchForm of the columns' batch is OK.
KernelDecision KernelDecisionOfRow(const v1::EventColumns& columns, int row,
                                   int entry, int64_t timestamp_ns);

// ForEachBatchEvent calls `visit` with every event of `batch` in order, as
// a `const Sample&`, `const HandOver&`, `const ProcessExit&`,
// `const ProcessStart&`, `const KernelDecision&` or `const UnreadableRow&`.
// REQUIRES: CheckBatchForm(batch) is OK.
template <typename Visitor>
void ForEachBatchEvent(const v1::IngestBatch& batch, Visitor&& visit) {
  for (const v1::Event& event : batch.events()) {
    if (event.handover() && event.process_exit()) {
      visit(UnreadableRow{absl::InvalidArgumentError(
          "handover and process_exit are both true: an event is one kind")});
    } else if (event.has_kernel_decision() &&
               (event.handover() || event.process_exit())) {
      visit(UnreadableRow{absl::InvalidArgumentError(
          "kernel_decision is set and handover or process_exit is true: an "
          "event is one kind")});
    } else if (event.process_start() &&
               (event.handover() || event.process_exit() ||
                event.has_kernel_decision())) {
      visit(UnreadableRow{absl::InvalidArgumentError(
          "process_start is true and handover, process_exit or "
          "kernel_decision is set: an event is one kind")});
    } else if (event.process_start()) {
      visit(ProcessStartFromEvent(event));
    } else if (event.has_kernel_decision()) {
      visit(KernelDecisionFromEvent(event));
    } else if (event.handover()) {
      visit(HandOverFromEvent(event));
    } else if (event.process_exit()) {
      visit(ProcessExitFromEvent(event));
    } else {
      visit(SampleFromEvent(event));
    }
  }
  const v1::EventColumns& columns = batch.columns();
  const int rows = columns.timestamp_delta_ns_size();
  proto_convert_internal::AttributeReader attributes(columns.attributes());
  // Unsigned, so that a sum of deltas that wraps is defined; it converts
  // back modulo 2^64.
  uint64_t timestamp_ns = 0;
  int kernel_entry = 0;  // the next entry of columns.kernel_decisions
  for (int row = 0; row < rows; ++row) {
    timestamp_ns += static_cast<uint64_t>(columns.timestamp_delta_ns(row));
    // The raw value: an open enum column may hold numbers it does not name.
    const int kind = columns.kind().Get(row);
    if (kind == v1::EVENT_KIND_SWITCH_OUT || kind == v1::EVENT_KIND_TICK) {
      Sample sample;
      sample.timestamp_ns = static_cast<int64_t>(timestamp_ns);
      sample.cpu = columns.cpu(row);
      sample.tgid = columns.tgid(row);
      sample.tid = columns.tid(row);
      sample.delta_ns = columns.delta_ns(row);
      sample.tick = kind == v1::EVENT_KIND_TICK;
      attributes.Read(row, &sample);
      visit(sample);
      continue;
    }
    attributes.Read(row, nullptr);
    if (kind == v1::EVENT_KIND_HANDOVER) {
      HandOver handover;
      handover.timestamp_ns = static_cast<int64_t>(timestamp_ns);
      handover.cpu = columns.cpu(row);
      handover.tgid = columns.tgid(row);
      handover.tid = columns.tid(row);
      visit(handover);
    } else if (kind == v1::EVENT_KIND_PROCESS_EXIT) {
      visit(ProcessExit{static_cast<int64_t>(timestamp_ns),
                        columns.tgid(row)});
    } else if (kind == v1::EVENT_KIND_PROCESS_START) {
      visit(ProcessStart{static_cast<int64_t>(timestamp_ns),
                         columns.tgid(row)});
    } else if (kind == v1::EVENT_KIND_KERNEL_DECISION) {
      visit(KernelDecisionOfRow(columns, row, kernel_entry++,
                                static_cast<int64_t>(timestamp_ns)));
    } else {
      visit(UnreadableRow{absl::InvalidArgumentError(absl::StrCat(
          "kind ", kind, " is not an EventKind (1 switch-out, 2 tick, ",
          "3 hand-over, 4 process exit, 5 kernel decision, 6 process start; "
          "0 is unset)"))});
    }
  }
}

// RecommendFromProto reads a Recommend request's query. InvalidArgument
// for a cpu without a tid (a CPU is a thread's): what the message alone
// shows; the engine checks the rest against the session (tracked tgid,
// known tid, online cpu, timestamp).
absl::StatusOr<RecommendRequest> RecommendFromProto(
    const v1::RecommendRequest& request);
// RecommendResponseToProto is the answer for `tgid`, a decision per policy.
v1::RecommendResponse RecommendResponseToProto(
    int32_t tgid, absl::Span<const PolicyDecision> decisions);

v1::Tunable TunableToProto(const TunableSpec& spec);
v1::PolicyDecision DecisionToProto(const PolicyDecision& decision);
v1::PolicyReport PolicyReportToProto(const PolicyReport& report);
// ChangeToProto leaves sequence and incarnation to the session.
v1::PreferenceChange ChangeToProto(const PreferenceChange& change);
// ScanToProto is `scan` of the policy named `policy`.
v1::ScanEvent ScanToProto(const ScanObservation& scan,
                          std::string_view policy);

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_PROTO_CONVERT_H_
