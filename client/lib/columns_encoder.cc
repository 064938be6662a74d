#include "client/lib/columns_encoder.h"

#include <string>
#include <string_view>
#include <type_traits>

namespace schedcache::client {
namespace {

// AppendLittleEndian appends `value` to a fixed-width column: its bytes,
// least significant first (proto/schedcache/v1/schedcache.proto,
// EventColumns).
template <typename T>
void AppendLittleEndian(std::string& column, T value) {
  auto bits = static_cast<std::make_unsigned_t<T>>(value);
  char bytes[sizeof(T)];
  for (char& byte : bytes) {
    byte = static_cast<char>(bits & 0xff);
    bits >>= 8;
  }
  column.append(bytes, sizeof(T));
}

}  // namespace

void ColumnsEncoder::AddRow(int64_t timestamp_ns, int32_t cpu, int32_t tgid,
                            int32_t tid, int64_t delta_ns, v1::EventKind kind,
                            uint64_t cache_group) {
  // The cache_group column goes only once a row names a group: until then
  // every row is 0, which an empty column says, so a batch that names none
  // keeps the bytes it had before the column existed. The first named
  // group fills in the rows before it (a no-op after).
  if (cache_group != kOwnCacheGroup || columns_.cache_group_size() != 0) {
    columns_.mutable_cache_group()->Resize(rows(), kOwnCacheGroup);
    columns_.add_cache_group(cache_group);
  }
  // Unsigned difference: defined for any two times; the server's sum wraps
  // back to timestamp_ns.
  const int64_t timestamp_delta = static_cast<int64_t>(
      static_cast<uint64_t>(timestamp_ns) -
      static_cast<uint64_t>(last_timestamp_ns_));
  last_timestamp_ns_ = timestamp_ns;
  columns_.add_cpu(cpu);
  columns_.add_tgid(tgid);
  columns_.add_tid(tid);
  if (form_ == ColumnsForm::kPacked) {
    columns_.add_timestamp_delta_ns(timestamp_delta);
    columns_.add_delta_ns(delta_ns);
    columns_.add_kind(kind);
    return;
  }
  AppendLittleEndian(*columns_.mutable_timestamp_delta_ns_le(),
                     timestamp_delta);
  AppendLittleEndian(*columns_.mutable_delta_ns_le(), delta_ns);
  AppendLittleEndian(*columns_.mutable_kind_le(), static_cast<int32_t>(kind));
}

uint32_t ColumnsEncoder::NewAttributes(const Sample& sample) {
  uint32_t fields = 0;
  SentAttributes& sent = sent_[sample.tgid];
  if (sample.nr_threads != kUnchangedNrThreads &&
      sample.nr_threads != sent.nr_threads) {
    fields |= v1::ATTRIBUTE_BIT_NR_THREADS;
    sent.nr_threads = sample.nr_threads;
  }
  if (sample.footprint_pages != kUnchangedFootprint &&
      sample.footprint_pages != sent.footprint_pages) {
    fields |= v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES;
    sent.footprint_pages = sample.footprint_pages;
  }
  if (!sample.comm.empty()) {
    auto [comm, first] = sent_comm_.try_emplace(sample.tgid, sample.comm);
    if (first || comm->second.view() != sample.comm.view()) {
      fields |= v1::ATTRIBUTE_BIT_COMM;
      comm->second = sample.comm;
    }
  }
  if (sample.numa_node != kUnchangedNumaNode) {
    auto [numa, first] =
        sent.numa_node_by_tid.try_emplace(sample.tid, sample.numa_node);
    if (first || numa->second != sample.numa_node) {
      fields |= v1::ATTRIBUTE_BIT_NUMA_NODE;
      numa->second = sample.numa_node;
    }
  }
  if (sample.jiffies != kDerivedJiffies && sample.jiffies != sent_jiffies_) {
    fields |= v1::ATTRIBUTE_BIT_JIFFIES;
    sent_jiffies_ = sample.jiffies;
  }
  return fields;
}

void ColumnsEncoder::Add(const Sample& sample) {
  const int row = rows();
  AddRow(sample.timestamp_ns, sample.cpu, sample.tgid, sample.tid,
         sample.delta_ns,
         sample.tick ? v1::EVENT_KIND_TICK : v1::EVENT_KIND_SWITCH_OUT,
         sample.cache_group);
  const uint32_t fields = NewAttributes(sample);
  if (fields == 0) return;
  v1::SparseAttributes& attributes = *columns_.mutable_attributes();
  if ((fields & v1::ATTRIBUTE_BIT_NR_THREADS) != 0) {
    attributes.add_nr_threads(sample.nr_threads);
  }
  if ((fields & v1::ATTRIBUTE_BIT_NUMA_NODE) != 0) {
    attributes.add_numa_node(sample.numa_node);
  }
  if ((fields & v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES) != 0) {
    attributes.add_footprint_pages(sample.footprint_pages);
  }
  if ((fields & v1::ATTRIBUTE_BIT_COMM) != 0) {
    const std::string_view comm = sample.comm.view();
    attributes.add_comm()->assign(comm.data(), comm.size());
  }
  if ((fields & v1::ATTRIBUTE_BIT_JIFFIES) != 0) {
    attributes.add_jiffies(sample.jiffies);
  }
  attributes.add_row(static_cast<uint32_t>(row));
  attributes.add_fields(fields);
}

void ColumnsEncoder::Add(const HandOver& handover) {
  AddRow(handover.timestamp_ns, handover.cpu, handover.tgid, handover.tid,
         /*delta_ns=*/0, v1::EVENT_KIND_HANDOVER);
}

void ColumnsEncoder::Add(const ProcessExit& exit) {
  // The server forgets the process: a later one with its tgid starts with
  // nothing known, so it must be sent everything again.
  sent_.erase(exit.tgid);
  sent_comm_.erase(exit.tgid);
  AddRow(exit.timestamp_ns, /*cpu=*/0, exit.tgid, /*tid=*/0, /*delta_ns=*/0,
         v1::EVENT_KIND_PROCESS_EXIT);
}

void ColumnsEncoder::Add(const ProcessStart& start) {
  // As at an exit: the server forgets a tracked process at its start.
  sent_.erase(start.tgid);
  sent_comm_.erase(start.tgid);
  AddRow(start.timestamp_ns, /*cpu=*/0, start.tgid, /*tid=*/0, /*delta_ns=*/0,
         v1::EVENT_KIND_PROCESS_START);
}

void ColumnsEncoder::Add(const KernelDecision& decision) {
  AddRow(decision.timestamp_ns, decision.cpu, decision.tgid, decision.tid,
         /*delta_ns=*/0, v1::EVENT_KIND_KERNEL_DECISION);
  v1::KernelDecisionColumns& k = *columns_.mutable_kernel_decisions();
  k.add_preferred_cpu(decision.preferred_cpu);
  k.add_scanned(decision.scanned);
  k.add_nr_running_avg(decision.nr_running_avg);
  k.add_footprint(decision.footprint);
  k.add_group(decision.group);
  k.add_jiffies(decision.jiffies);
  k.add_group_epoch(decision.group_epoch);
  k.add_next_scan(decision.next_scan);
  k.add_cpu_epoch(decision.cpu_epoch);
  k.add_cpu_epoch_next(decision.cpu_epoch_next);
}

void ColumnsEncoder::Clear() {
  // Field by field: Clear() would free the attributes message (proto3
  // frees message fields), and with it the columns' storage.
  columns_.clear_timestamp_delta_ns();
  columns_.clear_cpu();
  columns_.clear_tgid();
  columns_.clear_tid();
  columns_.clear_delta_ns();
  columns_.clear_kind();
  columns_.clear_timestamp_delta_ns_le();
  columns_.clear_delta_ns_le();
  columns_.clear_kind_le();
  columns_.clear_cache_group();
  columns_.mutable_attributes()->Clear();
  columns_.mutable_kernel_decisions()->Clear();
  last_timestamp_ns_ = 0;
  sent_.clear();
  // Only a server that takes the fixed-width form keeps the stream's
  // comms; any other needs each process's in every batch.
  if (form_ == ColumnsForm::kPacked) sent_comm_.clear();
  sent_jiffies_ = kDerivedJiffies;
}

}  // namespace schedcache::client
