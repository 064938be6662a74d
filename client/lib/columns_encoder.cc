#include "client/lib/columns_encoder.h"

#include <string_view>

namespace schedcache::client {

void ColumnsEncoder::AddRow(int64_t timestamp_ns, int32_t cpu, int32_t tgid,
                            int32_t tid, int64_t delta_ns,
                            v1::EventKind kind) {
  // Unsigned difference: defined for any two times; the server's sum wraps
  // back to timestamp_ns.
  columns_.add_timestamp_delta_ns(static_cast<int64_t>(
      static_cast<uint64_t>(timestamp_ns) -
      static_cast<uint64_t>(last_timestamp_ns_)));
  last_timestamp_ns_ = timestamp_ns;
  columns_.add_cpu(cpu);
  columns_.add_tgid(tgid);
  columns_.add_tid(tid);
  columns_.add_delta_ns(delta_ns);
  columns_.add_kind(kind);
}

void ColumnsEncoder::Add(const Sample& sample) {
  const int row = rows();
  AddRow(sample.timestamp_ns, sample.cpu, sample.tgid, sample.tid,
         sample.delta_ns,
         sample.tick ? v1::EVENT_KIND_TICK : v1::EVENT_KIND_SWITCH_OUT);
  uint32_t fields = 0;
  v1::SparseAttributes& attributes = *columns_.mutable_attributes();
  if (sample.nr_threads != kUnchangedNrThreads) {
    fields |= v1::ATTRIBUTE_BIT_NR_THREADS;
    attributes.add_nr_threads(sample.nr_threads);
  }
  if (sample.numa_node != kUnchangedNumaNode) {
    fields |= v1::ATTRIBUTE_BIT_NUMA_NODE;
    attributes.add_numa_node(sample.numa_node);
  }
  if (sample.footprint_pages != kUnchangedFootprint) {
    fields |= v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES;
    attributes.add_footprint_pages(sample.footprint_pages);
  }
  if (!sample.comm.empty()) {
    fields |= v1::ATTRIBUTE_BIT_COMM;
    const std::string_view comm = sample.comm.view();
    attributes.add_comm()->assign(comm.data(), comm.size());
  }
  if (fields != 0) {
    attributes.add_row(static_cast<uint32_t>(row));
    attributes.add_fields(fields);
  }
}

void ColumnsEncoder::Add(const HandOver& handover) {
  AddRow(handover.timestamp_ns, handover.cpu, handover.tgid, handover.tid,
         /*delta_ns=*/0, v1::EVENT_KIND_HANDOVER);
}

void ColumnsEncoder::Add(const ProcessExit& exit) {
  AddRow(exit.timestamp_ns, /*cpu=*/0, exit.tgid, /*tid=*/0, /*delta_ns=*/0,
         v1::EVENT_KIND_PROCESS_EXIT);
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
  columns_.mutable_attributes()->Clear();
  last_timestamp_ns_ = 0;
}

}  // namespace schedcache::client
