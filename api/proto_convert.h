// Conversions between the engine's C++ values (policies/) and the API's
// messages (schedcache.v1). Reading an IngestBatch is on the ingest hot
// path: both of its forms (Event messages and EventColumns rows) become
// Sample, HandOver, ProcessExit and KernelDecision values on the stack, in
// one loop, and never allocate.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_API_PROTO_CONVERT_H_
#define SCHEDCACHE_API_PROTO_CONVERT_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "events/event.h"
#include "policies/decision.h"
#include "policies/engine.h"
#include "policies/model_context.h"
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

// UnreadableRow is an event of no kind: a row of EventColumns whose kind is
// not an EventKind, or an Event of two kinds (two of hand-over, process
// exit, process start and kernel decision); or a sample whose attribute
// breaks its bound (CheckSampleAttributes). It is rejected with `reason`,
// like an event the engine refuses.
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

// FixedWidthColumns is true when `columns` carry timestamp_delta_ns,
// delta_ns and kind in their fixed-width form (any of the three `_le`
// fields set).
bool FixedWidthColumns(const v1::EventColumns& columns);
// ColumnRows is the row count of `columns`: that of timestamp_delta_ns in
// the form the batch uses.
int ColumnRows(const v1::EventColumns& columns);

// BatchEventCount is the number of events of `batch`: Event messages or
// column rows.
int BatchEventCount(const v1::IngestBatch& batch);

// CheckBatchForm checks what reading the rows relies on: one form per
// batch, columns of equal length (cache_group may also be empty: every row
// 0), attributes in increasing row order within
// the rows, one kernel_decisions entry per kernel decision row.
// InvalidArgument names the fields and their values.
absl::Status CheckBatchForm(const v1::IngestBatch& batch);

// CheckSampleAttributes is the one check, for both forms of a batch, of the
// bounds proto/schedcache/v1/schedcache.proto documents for a sample's
// optional attributes: nr_threads > 0, numa_node >= -1, footprint_pages
// >= 0, jiffies in [0, 2^62]. `present` is the sum of the AttributeBits
// the sample was sent with (an Event's set fields, an attribute entry's
// `fields`); `sample` holds their values as sent. It must run on the wire's
// values: Sample stores "unchanged" as an out-of-range value (events/
// event.h: nr_threads -1, numa_node -2, footprint_pages -1, jiffies -1), so
// the engine cannot tell those sent from those not sent. The engine checks
// the rest, with the values as sent in either form: the fields that have no
// such sentinel (timestamp_ns, cpu, tgid, tid, delta_ns, preferred_cpu) and
// what needs the session (a CPU or NUMA node of its topology, its clock).
// Returns InvalidArgument naming the field and its value. ForEachBatchEvent
// calls it for both forms, so every bound holds whichever form a client
// sends.
inline absl::Status CheckSampleAttributes(const Sample& sample,
                                          uint32_t present);

namespace proto_convert_internal {

// SampleAttributeError is CheckSampleAttributes' failure, out of line.
absl::Status SampleAttributeError(const Sample& sample, uint32_t present);

// PresentAttributes is the sum of the AttributeBits of the attributes
// `event` sets.
inline uint32_t PresentAttributes(const v1::Event& event) {
  uint32_t bits = 0;
  if (event.has_nr_threads()) bits |= v1::ATTRIBUTE_BIT_NR_THREADS;
  if (event.has_numa_node()) bits |= v1::ATTRIBUTE_BIT_NUMA_NODE;
  if (event.has_footprint_pages()) bits |= v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES;
  if (!event.comm().empty()) bits |= v1::ATTRIBUTE_BIT_COMM;
  if (event.has_jiffies()) bits |= v1::ATTRIBUTE_BIT_JIFFIES;
  return bits;
}

// AttributeReader walks the SparseAttributes of checked columns along
// their rows.
class AttributeReader {
 public:
  explicit AttributeReader(const v1::SparseAttributes& attributes)
      : attributes_(attributes), next_row_(RowOfEntry(0)) {}

  // Read consumes the entry of `row`, if it has one, setting its fields in
  // `sample` (nullptr: a hand-over row, whose values are skipped), and
  // returns the entry's `fields` (0: none). Rows come in increasing order.
  // Inline, with the entry's row at hand: most rows have no entry, and a
  // call per row was 7% of the server's instructions.
  uint32_t Read(int row, Sample* sample) {
    return static_cast<int64_t>(row) == next_row_ ? ReadEntry(sample) : 0;
  }

 private:
  // RowOfEntry is the row of entry `entry`, or -1 past the last.
  int64_t RowOfEntry(int entry) const {
    return entry < attributes_.row_size() ? int64_t{attributes_.row(entry)}
                                          : -1;
  }
  // ReadEntry consumes the next entry into `sample` (nullptr: skipped) and
  // returns its `fields`.
  uint32_t ReadEntry(Sample* sample) {
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
    return fields;
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

// LoadLittleEndian is entry `row` of a fixed-width column of `T`s: little
// endian, two's complement. REQUIRES: the column holds more than `row`.
template <typename T>
T LoadLittleEndian(const std::string& column, int row) {
  std::make_unsigned_t<T> bits;
  const char* at = column.data() + static_cast<size_t>(row) * sizeof(T);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&bits, at, sizeof(T));
  } else {
    bits = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      bits |= static_cast<std::make_unsigned_t<T>>(
                  static_cast<unsigned char>(at[i]))
              << (8 * i);
    }
  }
  return static_cast<T>(bits);
}

// PackedRows and FixedRows read the three columns that come in two forms
// (EventColumns' packed fields, or their `_le` fixed-width twins), so one
// loop reads either.
struct PackedRows {
  const v1::EventColumns& columns;
  int64_t TimestampDelta(int row) const {
    return columns.timestamp_delta_ns(row);
  }
  int64_t DeltaNs(int row) const { return columns.delta_ns(row); }
  // The raw value: an open enum column may hold numbers it does not name.
  int Kind(int row) const { return columns.kind().Get(row); }
};
struct FixedRows {
  const v1::EventColumns& columns;
  int64_t TimestampDelta(int row) const {
    return LoadLittleEndian<int64_t>(columns.timestamp_delta_ns_le(), row);
  }
  int64_t DeltaNs(int row) const {
    return LoadLittleEndian<int64_t>(columns.delta_ns_le(), row);
  }
  int Kind(int row) const {
    return LoadLittleEndian<int32_t>(columns.kind_le(), row);
  }
};

}  // namespace proto_convert_internal

inline absl::Status CheckSampleAttributes(const Sample& sample,
                                          uint32_t present) {
  const bool bad =
      ((present & v1::ATTRIBUTE_BIT_NR_THREADS) && sample.nr_threads < 1) ||
      ((present & v1::ATTRIBUTE_BIT_NUMA_NODE) && sample.numa_node < -1) ||
      ((present & v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES) &&
       sample.footprint_pages < 0) ||
      ((present & v1::ATTRIBUTE_BIT_JIFFIES) &&
       (sample.jiffies < 0 || sample.jiffies > ModelContext::kMaxJiffies));
  if (!bad) return absl::OkStatus();
  return proto_convert_internal::SampleAttributeError(sample, present);
}

// KernelDecisionOfRow is entry `entry` of `columns`' kernel_decisions for
// a row at `timestamp_ns` (its time, cpu, tgid and tid from `row`).
// REQUIRES: CheckBatchForm of the columns' batch is OK.
KernelDecision KernelDecisionOfRow(const v1::EventColumns& columns, int row,
                                   int entry, int64_t timestamp_ns);

namespace proto_convert_internal {

// ForEachColumnRow is ForEachBatchEvent over the rows of `columns`, whose
// two-form columns `form` reads.
template <typename Rows, typename Visitor>
void ForEachColumnRow(const v1::EventColumns& columns, const Rows& form,
                      Visitor& visit) {
  const int rows = ColumnRows(columns);
  proto_convert_internal::AttributeReader attributes(columns.attributes());
  // Unsigned, so that a sum of deltas that wraps is defined; it converts
  // back modulo 2^64.
  uint64_t timestamp_ns = 0;
  int kernel_entry = 0;  // the next entry of columns.kernel_decisions
  // An empty cache_group column: every row in its process's own group.
  const bool named_groups = columns.cache_group_size() != 0;
  for (int row = 0; row < rows; ++row) {
    timestamp_ns += static_cast<uint64_t>(form.TimestampDelta(row));
    const int kind = form.Kind(row);
    if (kind == v1::EVENT_KIND_SWITCH_OUT || kind == v1::EVENT_KIND_TICK) {
      Sample sample;
      sample.timestamp_ns = static_cast<int64_t>(timestamp_ns);
      sample.cpu = columns.cpu(row);
      sample.tgid = columns.tgid(row);
      sample.tid = columns.tid(row);
      sample.delta_ns = form.DeltaNs(row);
      sample.tick = kind == v1::EVENT_KIND_TICK;
      if (named_groups) sample.cache_group = columns.cache_group(row);
      const uint32_t present = attributes.Read(row, &sample);
      absl::Status bad = present == 0 ? absl::OkStatus()
                                      : CheckSampleAttributes(sample, present);
      if (bad.ok()) {
        visit(sample);
      } else {
        visit(UnreadableRow{std::move(bad)});
      }
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

}  // namespace proto_convert_internal

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
      const Sample sample = SampleFromEvent(event);
      absl::Status bad = CheckSampleAttributes(
          sample, proto_convert_internal::PresentAttributes(event));
      if (bad.ok()) {
        visit(sample);
      } else {
        visit(UnreadableRow{std::move(bad)});
      }
    }
  }
  const v1::EventColumns& columns = batch.columns();
  if (FixedWidthColumns(columns)) {
    proto_convert_internal::ForEachColumnRow(
        columns, proto_convert_internal::FixedRows{columns}, visit);
  } else {
    proto_convert_internal::ForEachColumnRow(
        columns, proto_convert_internal::PackedRows{columns}, visit);
  }
}

// RecommendFromProto reads a Recommend request's query. InvalidArgument
// for a cpu without a tid (a CPU is a thread's): what the message alone
// shows; the engine checks the rest against the session (tracked tgid,
// known tid, online cpu, timestamp).
absl::StatusOr<RecommendRequest> RecommendFromProto(
    const v1::RecommendRequest& request);
// RecommendResponseToProto is the answer for `tgid`, a decision per policy,
// naming the cache group they are for (the decisions', which share one).
v1::RecommendResponse RecommendResponseToProto(
    int32_t tgid, absl::Span<const PolicyDecision> decisions);

v1::Tunable TunableToProto(const TunableSpec& spec);
v1::PolicyDecision DecisionToProto(const PolicyDecision& decision);
v1::PolicyReport PolicyReportToProto(const PolicyReport& report);
// ReportToProto is `report` as GetReport's answer, but for what the engine
// does not know (the session's name, its events rejected, collector
// losses), which the session sets.
v1::Report ReportToProto(const EngineReport& report);
// PolicyReportFromProto is PolicyReportToProto's inverse.
PolicyReport PolicyReportFromProto(const v1::PolicyReport& report);
// ReportFromProto is ReportToProto's inverse, for a client that ran its
// session on a server (eval's remote A/B); the Report message has no
// per-process figures, so kernel_processes stays empty.
EngineReport ReportFromProto(const v1::Report& report);
// ChangeToProto leaves sequence and incarnation to the session.
v1::PreferenceChange ChangeToProto(const PreferenceChange& change);
// ScanToProto is `scan` of the policy named `policy`.
v1::ScanEvent ScanToProto(const ScanObservation& scan,
                          std::string_view policy);
// ChangeFromProto is ChangeToProto's inverse, for a client watching a
// session on a server; its policy views change.policy(), so it is valid
// while `change` is.
PreferenceChange ChangeFromProto(const v1::PreferenceChange& change);
// ScanFromProto is ScanToProto's inverse, `policy` being the index of
// scan.policy() in the session's order (which the message does not hold).
// Its comm views scan.comm() and its llc_occupancy views `occupancy`, which
// it refills (storage the caller keeps and reuses from scan to scan); so it
// is valid while both are and `occupancy` is not changed.
ScanObservation ScanFromProto(const v1::ScanEvent& scan, int policy,
                              std::vector<LlcOccupancy>& occupancy);

}  // namespace schedcache

#endif  // SCHEDCACHE_API_PROTO_CONVERT_H_
