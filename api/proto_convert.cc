#include "api/proto_convert.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/types/span.h"
#include "common/status_macros.h"

namespace schedcache {
namespace {

v1::NoPreferenceReason ReasonToProto(NoPreferenceReason reason) {
  switch (reason) {
    case NoPreferenceReason::kNone:
      return v1::NO_PREFERENCE_REASON_UNSPECIFIED;
    case NoPreferenceReason::kNoData:
      return v1::NO_PREFERENCE_REASON_NO_DATA;
    case NoPreferenceReason::kSingleThread:
      return v1::NO_PREFERENCE_REASON_SINGLE_THREAD;
    case NoPreferenceReason::kTooManyThreads:
      return v1::NO_PREFERENCE_REASON_TOO_MANY_THREADS;
    case NoPreferenceReason::kFootprintTooLarge:
      return v1::NO_PREFERENCE_REASON_FOOTPRINT_TOO_LARGE;
    case NoPreferenceReason::kTimedOut:
      return v1::NO_PREFERENCE_REASON_TIMED_OUT;
    case NoPreferenceReason::kDisabled:
      return v1::NO_PREFERENCE_REASON_DISABLED;
    case NoPreferenceReason::kNotCacheAware:
      return v1::NO_PREFERENCE_REASON_NOT_CACHE_AWARE;
    case NoPreferenceReason::kOtherNumaNode:
      return v1::NO_PREFERENCE_REASON_OTHER_NUMA_NODE;
    case NoPreferenceReason::kExited:
      return v1::NO_PREFERENCE_REASON_EXITED;
    case NoPreferenceReason::kEvicted:
      return v1::NO_PREFERENCE_REASON_EVICTED;
    case NoPreferenceReason::kKernelNone:
      return v1::NO_PREFERENCE_REASON_KERNEL_NONE;
  }
  return v1::NO_PREFERENCE_REASON_NO_DATA;
}

// ReasonFromProto is ReasonToProto's inverse, read off it so that the
// mapping is written once; a number the enum does not name is kNoData.
NoPreferenceReason ReasonFromProto(v1::NoPreferenceReason reason) {
  for (int i = 0; i <= static_cast<int>(NoPreferenceReason::kKernelNone); ++i) {
    const auto candidate = static_cast<NoPreferenceReason>(i);
    if (ReasonToProto(candidate) == reason) return candidate;
  }
  return NoPreferenceReason::kNoData;
}

void DistributionToProto(const Distribution& from, v1::Distribution& to) {
  to.set_count(from.count);
  to.set_mean(from.mean);
  to.set_p50(from.p50);
  to.set_p99(from.p99);
  to.set_max(from.max);
}

}  // namespace

namespace proto_convert_internal {

absl::Status SampleAttributeError(const Sample& sample, uint32_t present) {
  if ((present & v1::ATTRIBUTE_BIT_NR_THREADS) && sample.nr_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("nr_threads ", sample.nr_threads, " must be >= 1"));
  }
  if ((present & v1::ATTRIBUTE_BIT_NUMA_NODE) && sample.numa_node < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("numa_node ", sample.numa_node,
                     " is not a NUMA node (-1: no preferred node)"));
  }
  if ((present & v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES) &&
      sample.footprint_pages < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "footprint_pages ", sample.footprint_pages, " must not be negative"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("jiffies ", sample.jiffies, " is outside [0, ",
                   ModelContext::kMaxJiffies, "]"));
}

}  // namespace proto_convert_internal

Sample SampleFromEvent(const v1::Event& event) {
  Sample sample;
  sample.timestamp_ns = event.timestamp_ns();
  sample.cpu = event.cpu();
  sample.tgid = event.tgid();
  sample.tid = event.tid();
  sample.delta_ns = event.delta_ns();
  sample.tick = event.tick();
  if (event.has_nr_threads()) sample.nr_threads = event.nr_threads();
  if (event.has_numa_node()) sample.numa_node = event.numa_node();
  if (event.has_footprint_pages()) {
    sample.footprint_pages = event.footprint_pages();
  }
  if (!event.comm().empty()) sample.comm.Assign(event.comm());
  if (event.has_jiffies()) sample.jiffies = event.jiffies();
  sample.cache_group = event.cache_group();
  return sample;
}

HandOver HandOverFromEvent(const v1::Event& event) {
  HandOver handover;
  handover.timestamp_ns = event.timestamp_ns();
  handover.cpu = event.cpu();
  handover.tgid = event.tgid();
  handover.tid = event.tid();
  return handover;
}

ProcessExit ProcessExitFromEvent(const v1::Event& event) {
  return ProcessExit{event.timestamp_ns(), event.tgid()};
}

ProcessStart ProcessStartFromEvent(const v1::Event& event) {
  return ProcessStart{event.timestamp_ns(), event.tgid()};
}

KernelDecision KernelDecisionFromEvent(const v1::Event& event) {
  const v1::KernelDecisionFields& fields = event.kernel_decision();
  KernelDecision d;
  d.timestamp_ns = event.timestamp_ns();
  d.cpu = event.cpu();
  d.tgid = event.tgid();
  d.tid = event.tid();
  d.preferred_cpu = fields.preferred_cpu();
  d.scanned = fields.scanned();
  d.nr_running_avg = fields.nr_running_avg();
  d.footprint = fields.footprint();
  d.group = fields.group();
  d.jiffies = fields.jiffies();
  d.group_epoch = fields.group_epoch();
  d.next_scan = fields.next_scan();
  d.cpu_epoch = fields.cpu_epoch();
  d.cpu_epoch_next = fields.cpu_epoch_next();
  return d;
}

KernelDecision KernelDecisionOfRow(const v1::EventColumns& columns, int row,
                                   int entry, int64_t timestamp_ns) {
  const v1::KernelDecisionColumns& k = columns.kernel_decisions();
  KernelDecision d;
  d.timestamp_ns = timestamp_ns;
  d.cpu = columns.cpu(row);
  d.tgid = columns.tgid(row);
  d.tid = columns.tid(row);
  d.preferred_cpu = k.preferred_cpu(entry);
  d.scanned = k.scanned(entry);
  d.nr_running_avg = k.nr_running_avg(entry);
  d.footprint = k.footprint(entry);
  d.group = k.group(entry);
  d.jiffies = k.jiffies(entry);
  d.group_epoch = k.group_epoch(entry);
  d.next_scan = k.next_scan(entry);
  d.cpu_epoch = k.cpu_epoch(entry);
  d.cpu_epoch_next = k.cpu_epoch_next(entry);
  return d;
}

namespace {

// CheckAttributes checks that `attributes` name rows below `rows` in
// increasing order and hold one value per field their entries set.
absl::Status CheckAttributes(const v1::SparseAttributes& attributes,
                             int rows) {
  if (attributes.fields_size() != attributes.row_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "columns.attributes.fields has ", attributes.fields_size(),
        " entries but columns.attributes.row has ", attributes.row_size()));
  }
  int64_t previous_row = -1;
  constexpr int kBits = 5;
  int set[kBits] = {};  // entries setting each bit, low bit first
  for (int i = 0; i < attributes.row_size(); ++i) {
    const int64_t row = attributes.row(i);
    if (row >= rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("columns.attributes.row[", i, "] ", row,
                       " is past the last row (the columns have ", rows,
                       " rows)"));
    }
    if (row <= previous_row) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.attributes.row[", i, "] ", row, " does not follow ",
          previous_row, " (rows must increase)"));
    }
    previous_row = row;
    const uint32_t fields = attributes.fields(i);
    if (fields == 0 || fields >= (1u << kBits)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.attributes.fields[", i, "] ", fields,
          " is not a sum of AttributeBits (1, 2, 4, 8, 16; at least one)"));
    }
    for (int bit = 0; bit < kBits; ++bit) set[bit] += (fields >> bit) & 1;
  }
  const std::pair<const char*, int> values[] = {
      {"nr_threads", attributes.nr_threads_size()},
      {"numa_node", attributes.numa_node_size()},
      {"footprint_pages", attributes.footprint_pages_size()},
      {"comm", attributes.comm_size()},
      {"jiffies", attributes.jiffies_size()},
  };
  for (int bit = 0; bit < kBits; ++bit) {
    const auto& [name, count] = values[bit];
    if (count != set[bit]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.attributes.", name, " has ", count, " values but ",
          set[bit], " entries set its bit (", 1 << bit, ")"));
    }
  }
  return absl::OkStatus();
}

// RowColumn is one per-row column of EventColumns: every field but
// attributes and kernel_decisions. The one list of them, so clearing, the
// emptiness test and the length check cannot miss a column added to the
// proto. A column with a fixed-width form names its `_le` twin; a column
// that may be left empty (cache_group: every row its default) says so.
struct RowColumn {
  const char* name;
  int (v1::EventColumns::*size)() const;
  void (v1::EventColumns::*clear)();
  const char* fixed_name = nullptr;
  const std::string& (v1::EventColumns::*fixed)() const = nullptr;
  void (v1::EventColumns::*clear_fixed)() = nullptr;
  int width = 0;  // bytes per row of the fixed-width form
  bool may_be_empty = false;
};
constexpr RowColumn kRowColumns[] = {
    {"timestamp_delta_ns", &v1::EventColumns::timestamp_delta_ns_size,
     &v1::EventColumns::clear_timestamp_delta_ns, "timestamp_delta_ns_le",
     &v1::EventColumns::timestamp_delta_ns_le,
     &v1::EventColumns::clear_timestamp_delta_ns_le, 8},
    {"cpu", &v1::EventColumns::cpu_size, &v1::EventColumns::clear_cpu},
    {"tgid", &v1::EventColumns::tgid_size, &v1::EventColumns::clear_tgid},
    {"tid", &v1::EventColumns::tid_size, &v1::EventColumns::clear_tid},
    {"delta_ns", &v1::EventColumns::delta_ns_size,
     &v1::EventColumns::clear_delta_ns, "delta_ns_le",
     &v1::EventColumns::delta_ns_le, &v1::EventColumns::clear_delta_ns_le, 8},
    {"kind", &v1::EventColumns::kind_size, &v1::EventColumns::clear_kind,
     "kind_le", &v1::EventColumns::kind_le, &v1::EventColumns::clear_kind_le,
     4},
    {"cache_group", &v1::EventColumns::cache_group_size,
     &v1::EventColumns::clear_cache_group, nullptr, nullptr, nullptr, 0,
     /*may_be_empty=*/true},
};

// FixedBytes is the byte length of `column`'s fixed-width form (0 when it
// has none).
size_t FixedBytes(const v1::EventColumns& columns, const RowColumn& column) {
  return column.fixed == nullptr ? 0 : (columns.*column.fixed)().size();
}

// CheckRowColumns checks that every per-row column is in the batch's one
// form, holds whole fixed-width values, and has `rows` rows.
absl::Status CheckRowColumns(const v1::EventColumns& columns, int rows) {
  const bool fixed_form = FixedWidthColumns(columns);
  const char* const rows_name = fixed_form ? kRowColumns[0].fixed_name
                                           : kRowColumns[0].name;
  for (const RowColumn& column : kRowColumns) {
    const size_t bytes = FixedBytes(columns, column);
    if (column.fixed != nullptr && bytes % column.width != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.", column.fixed_name, " has ", bytes,
          " bytes, not a multiple of its width ", column.width,
          " (one little-endian value per row)"));
    }
    const int packed = (columns.*column.size)();
    if (column.fixed != nullptr && fixed_form && packed != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.", column.name, " has ", packed,
          " rows but the batch sends the fixed-width form (columns.",
          column.fixed_name, "); a batch carries its columns in one form"));
    }
    const bool fixed = column.fixed != nullptr && fixed_form;
    const int64_t length =
        fixed ? static_cast<int64_t>(bytes / column.width) : packed;
    if (length != rows && !(column.may_be_empty && length == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.", fixed ? column.fixed_name : column.name, " has ",
          length, " rows but columns.", rows_name, " has ", rows,
          column.may_be_empty ? " (an empty column: every row 0)" : ""));
    }
  }
  return absl::OkStatus();
}

// KernelDecisionRows is the number of EVENT_KIND_KERNEL_DECISION rows of
// columns whose row lengths CheckRowColumns has checked.
int64_t KernelDecisionRows(const v1::EventColumns& columns) {
  if (!FixedWidthColumns(columns)) {
    const auto& kinds = columns.kind();
    return std::count(kinds.begin(), kinds.end(),
                      v1::EVENT_KIND_KERNEL_DECISION);
  }
  const proto_convert_internal::FixedRows form{columns};
  const int rows = ColumnRows(columns);
  int64_t decisions = 0;
  for (int row = 0; row < rows; ++row) {
    decisions += form.Kind(row) == v1::EVENT_KIND_KERNEL_DECISION ? 1 : 0;
  }
  return decisions;
}

// KernelColumn is one column of KernelDecisionColumns, listed once as
// kRowColumns are.
struct KernelColumn {
  const char* name;
  int (v1::KernelDecisionColumns::*size)() const;
};
constexpr KernelColumn kKernelColumns[] = {
    {"preferred_cpu", &v1::KernelDecisionColumns::preferred_cpu_size},
    {"scanned", &v1::KernelDecisionColumns::scanned_size},
    {"nr_running_avg", &v1::KernelDecisionColumns::nr_running_avg_size},
    {"footprint", &v1::KernelDecisionColumns::footprint_size},
    {"group", &v1::KernelDecisionColumns::group_size},
    {"jiffies", &v1::KernelDecisionColumns::jiffies_size},
    {"group_epoch", &v1::KernelDecisionColumns::group_epoch_size},
    {"next_scan", &v1::KernelDecisionColumns::next_scan_size},
    {"cpu_epoch", &v1::KernelDecisionColumns::cpu_epoch_size},
    {"cpu_epoch_next", &v1::KernelDecisionColumns::cpu_epoch_next_size},
};

// CheckKernelColumns checks that every kernel_decisions column has one
// entry per kernel decision row.
absl::Status CheckKernelColumns(const v1::EventColumns& columns) {
  const int64_t decisions = KernelDecisionRows(columns);
  for (const KernelColumn& column : kKernelColumns) {
    const int length = (columns.kernel_decisions().*column.size)();
    if (length != decisions) {
      return absl::InvalidArgumentError(absl::StrCat(
          "columns.kernel_decisions.", column.name, " has ", length,
          " entries but the columns have ", decisions,
          " kernel decision rows"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool FixedWidthColumns(const v1::EventColumns& columns) {
  return !columns.timestamp_delta_ns_le().empty() ||
         !columns.delta_ns_le().empty() || !columns.kind_le().empty();
}

int ColumnRows(const v1::EventColumns& columns) {
  return columns.timestamp_delta_ns_size() +
         static_cast<int>(columns.timestamp_delta_ns_le().size() /
                          sizeof(int64_t));
}

void ClearColumns(v1::EventColumns& columns) {
  for (const RowColumn& column : kRowColumns) {
    (columns.*column.clear)();
    if (column.clear_fixed != nullptr) (columns.*column.clear_fixed)();
  }
  columns.mutable_attributes()->Clear();  // repeated fields only: kept
  columns.mutable_kernel_decisions()->Clear();
}

bool ColumnsEmpty(const v1::EventColumns& columns) {
  for (const RowColumn& column : kRowColumns) {
    if ((columns.*column.size)() != 0 || FixedBytes(columns, column) != 0) {
      return false;
    }
  }
  return columns.attributes().ByteSizeLong() == 0 &&
         columns.kernel_decisions().ByteSizeLong() == 0;
}

int BatchEventCount(const v1::IngestBatch& batch) {
  return batch.events_size() + ColumnRows(batch.columns());
}

absl::Status CheckBatchForm(const v1::IngestBatch& batch) {
  const v1::EventColumns& columns = batch.columns();
  // By sizes, not has_columns(): the server keeps an emptied columns
  // message between batches, and an empty one carries nothing.
  if (ColumnsEmpty(columns)) return absl::OkStatus();
  if (batch.events_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sets both events (", batch.events_size(),
        ") and columns; a batch carries one form"));
  }
  const int rows = ColumnRows(columns);
  RETURN_IF_ERROR(CheckRowColumns(columns, rows));
  RETURN_IF_ERROR(CheckKernelColumns(columns));
  return CheckAttributes(columns.attributes(), rows);
}

absl::StatusOr<RecommendRequest> RecommendFromProto(
    const v1::RecommendRequest& request) {
  if (request.has_cpu() && !request.has_tid()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cpu: ", request.cpu(), " given without tid (a CPU is a thread's)"));
  }
  RecommendRequest query;
  query.tgid = request.tgid();
  if (request.has_tid()) query.tid = request.tid();
  if (request.has_cpu()) query.cpu = request.cpu();
  query.scan = request.scan();
  query.timestamp_ns = request.timestamp_ns();
  return query;
}

v1::RecommendResponse RecommendResponseToProto(
    int32_t tgid, absl::Span<const PolicyDecision> decisions) {
  v1::RecommendResponse response;
  response.set_tgid(tgid);
  // Every policy decides for the one group the process is in.
  if (!decisions.empty()) response.set_cache_group(decisions.front().cache_group);
  for (const PolicyDecision& decision : decisions) {
    *response.add_decisions() = DecisionToProto(decision);
  }
  return response;
}

v1::Tunable TunableToProto(const TunableSpec& spec) {
  v1::Tunable tunable;
  tunable.set_name(spec.name);
  tunable.set_description(spec.description);
  tunable.set_default_value(spec.default_value);
  tunable.set_min_value(spec.min_value);
  tunable.set_max_value(spec.max_value);
  for (const std::string& name : spec.value_names) {
    tunable.add_value_names(name);
  }
  return tunable;
}

namespace {

// OccupancyToProto appends `llcs` to `out` (a decision's or a scan's).
void OccupancyToProto(
    absl::Span<const LlcOccupancy> llcs,
    google::protobuf::RepeatedPtrField<v1::LlcOccupancy>& out) {
  for (const LlcOccupancy& llc : llcs) {
    v1::LlcOccupancy* entry = out.Add();
    entry->set_llc(llc.llc);
    entry->set_occupancy(llc.occupancy);
  }
}

}  // namespace

v1::PolicyDecision DecisionToProto(const PolicyDecision& decision) {
  v1::PolicyDecision out;
  out.set_policy(decision.policy);
  out.set_preferred_llc(decision.preferred_llc);
  out.set_preferred_cpu(decision.preferred_cpu);
  out.set_reason(ReasonToProto(decision.reason));
  out.set_nr_threads(decision.nr_threads);
  out.set_footprint_pages(decision.footprint_pages);
  OccupancyToProto(decision.llc_occupancy, *out.mutable_llc_occupancy());
  out.set_nr_running(decision.nr_running);
  out.set_nr_running_avg(decision.nr_running_avg);
  out.mutable_cost()->set_cpus_scanned(decision.cost.cpus_scanned);
  out.mutable_cost()->set_llcs_scanned(decision.cost.llcs_scanned);
  out.mutable_cost()->set_scan_ns(decision.cost.scan_ns);
  out.set_scanned_now(decision.scanned_now);
  return out;
}

v1::PolicyReport PolicyReportToProto(const PolicyReport& report) {
  v1::PolicyReport out;
  out.set_policy(report.name);
  out.set_scans(report.scans);
  out.set_scans_skipped(report.scans_skipped);
  out.set_scans_skipped_disabled(report.scans_skipped_disabled);
  out.set_scans_aborted(report.scans_aborted);
  DistributionToProto(report.cpus_scanned, *out.mutable_cpus_scanned());
  DistributionToProto(report.llcs_scanned, *out.mutable_llcs_scanned());
  DistributionToProto(report.scan_ns, *out.mutable_scan_ns());
  out.set_decisions(report.decisions);
  out.set_agreements(report.agreements);
  if (report.agreement.has_value()) out.set_agreement(*report.agreement);
  out.set_preferred_llc_changes(report.preferred_llc_changes);
  out.set_runtime_on_preferred_llc(report.runtime_on_preferred_llc);
  out.set_kernel_decisions(report.kernel_decisions);
  out.set_kernel_scans(report.kernel_scans);
  out.set_kernel_agreements(report.kernel_agreements);
  if (report.kernel_agreement.has_value()) {
    out.set_kernel_agreement(*report.kernel_agreement);
  }
  out.set_kernel_process_scans(report.kernel_process_scans);
  return out;
}

v1::Report ReportToProto(const EngineReport& report) {
  v1::Report out;
  for (const PolicyReport& policy : report.policies) {
    *out.add_policies() = PolicyReportToProto(policy);
  }
  out.set_samples_applied(report.samples_applied);
  out.set_handovers_applied(report.handovers_applied);
  out.set_processes_tracked(report.processes_tracked);
  out.set_processes_evicted(report.processes_evicted);
  out.set_process_exits_applied(report.exits_applied);
  out.set_process_starts_applied(report.starts_applied);
  out.set_kernel_decisions_applied(report.kernel_decisions_applied);
  out.set_kernel_decisions_unmatched(report.kernel_decisions_unmatched);
  for (const CacheGroupRuntime& group : report.cache_groups) {
    v1::CacheGroupRuntime& g = *out.add_cache_groups();
    g.set_id(group.id);
    g.set_runtime_ns(group.runtime_ns);
    for (const int64_t ns : group.runtime_on_preferred_llc_ns) {
      g.add_runtime_on_preferred_llc_ns(ns);
    }
  }
  out.set_cache_groups_left_out(report.cache_groups_left_out);
  return out;
}

Distribution DistributionFromProto(const v1::Distribution& from) {
  return Distribution{from.count(), from.mean(), from.p50(), from.p99(),
                      from.max()};
}

PolicyReport PolicyReportFromProto(const v1::PolicyReport& report) {
  PolicyReport out;
  out.name = report.policy();
  out.scans = report.scans();
  out.scans_skipped = report.scans_skipped();
  out.scans_skipped_disabled = report.scans_skipped_disabled();
  out.scans_aborted = report.scans_aborted();
  out.cpus_scanned = DistributionFromProto(report.cpus_scanned());
  out.llcs_scanned = DistributionFromProto(report.llcs_scanned());
  out.scan_ns = DistributionFromProto(report.scan_ns());
  out.decisions = report.decisions();
  out.agreements = report.agreements();
  if (report.has_agreement()) out.agreement = report.agreement();
  out.preferred_llc_changes = report.preferred_llc_changes();
  out.runtime_on_preferred_llc = report.runtime_on_preferred_llc();
  out.kernel_decisions = report.kernel_decisions();
  out.kernel_scans = report.kernel_scans();
  out.kernel_agreements = report.kernel_agreements();
  if (report.has_kernel_agreement()) {
    out.kernel_agreement = report.kernel_agreement();
  }
  out.kernel_process_scans = report.kernel_process_scans();
  return out;
}

EngineReport ReportFromProto(const v1::Report& report) {
  EngineReport out;
  for (const v1::PolicyReport& policy : report.policies()) {
    out.policies.push_back(PolicyReportFromProto(policy));
  }
  out.samples_applied = report.samples_applied();
  out.handovers_applied = report.handovers_applied();
  out.processes_tracked = report.processes_tracked();
  out.processes_evicted = report.processes_evicted();
  out.exits_applied = report.process_exits_applied();
  out.starts_applied = report.process_starts_applied();
  out.kernel_decisions_applied = report.kernel_decisions_applied();
  out.kernel_decisions_unmatched = report.kernel_decisions_unmatched();
  for (const v1::CacheGroupRuntime& group : report.cache_groups()) {
    out.cache_groups.push_back(CacheGroupRuntime{
        group.id(), group.runtime_ns(),
        {group.runtime_on_preferred_llc_ns().begin(),
         group.runtime_on_preferred_llc_ns().end()}});
  }
  out.cache_groups_left_out = report.cache_groups_left_out();
  // The Report message has no per-process figures: kernel_processes stays
  // empty.
  return out;
}

v1::PreferenceChange ChangeToProto(const PreferenceChange& change) {
  v1::PreferenceChange out;
  out.set_tgid(change.tgid);
  out.set_policy(std::string(change.policy));
  out.set_old_llc(change.old_llc);
  out.set_new_llc(change.new_llc);
  out.set_timestamp_ns(change.timestamp_ns);
  out.set_new_cpu(change.new_cpu);
  out.set_reason(ReasonToProto(change.reason));
  out.set_cache_group(change.cache_group);
  return out;
}

v1::ScanEvent ScanToProto(const ScanObservation& scan,
                          std::string_view policy) {
  v1::ScanEvent out;
  out.set_policy(std::string(policy));
  out.set_tgid(scan.tgid);
  out.set_tid(scan.tid);
  out.set_cpu(scan.cpu);
  out.set_timestamp_ns(scan.timestamp_ns);
  out.mutable_cost()->set_cpus_scanned(scan.cpus_scanned);
  out.mutable_cost()->set_llcs_scanned(scan.llcs_scanned);
  out.mutable_cost()->set_scan_ns(scan.scan_ns);
  out.set_preferred_llc(scan.preferred_llc);
  out.set_comm(std::string(scan.comm));
  OccupancyToProto(scan.llc_occupancy, *out.mutable_llc_occupancy());
  return out;
}

PreferenceChange ChangeFromProto(const v1::PreferenceChange& change) {
  return PreferenceChange{.tgid = change.tgid(),
                          .policy = change.policy(),
                          .old_llc = change.old_llc(),
                          .new_llc = change.new_llc(),
                          .new_cpu = change.new_cpu(),
                          .reason = ReasonFromProto(change.reason()),
                          .timestamp_ns = change.timestamp_ns(),
                          .cache_group = change.cache_group()};
}

ScanObservation ScanFromProto(const v1::ScanEvent& scan, int policy,
                              std::vector<LlcOccupancy>& occupancy) {
  occupancy.clear();
  for (const v1::LlcOccupancy& llc : scan.llc_occupancy()) {
    occupancy.push_back(
        LlcOccupancy{static_cast<int>(llc.llc()), llc.occupancy()});
  }
  return ScanObservation{
      .policy = policy,
      .tgid = scan.tgid(),
      .tid = scan.tid(),
      .cpu = scan.cpu(),
      .timestamp_ns = scan.timestamp_ns(),
      .cpus_scanned = static_cast<int>(scan.cost().cpus_scanned()),
      .comm = scan.comm(),
      .llcs_scanned = static_cast<int>(scan.cost().llcs_scanned()),
      .scan_ns = scan.cost().scan_ns(),
      .preferred_llc = scan.preferred_llc(),
      .llc_occupancy = occupancy};
}

}  // namespace schedcache
