// Sample/HandOver/ProcessExit/ProcessStart/KernelDecision -> rows of
// schedcache.v1.EventColumns, the client half of
// the ingest path (the server's inverse is api/proto_convert.h). Appends
// to columns the batch already holds, so a reused batch allocates nothing
// per event once its columns have grown.
//
// Attributes are sent only when they change: within one batch, a row
// carries a process's nr_threads or footprint_pages (a thread's
// numa_node) only when it differs from what an earlier row of the batch
// sent for that process (thread); unset means unchanged to the server, so
// it keeps the value. Every batch starts afresh (its first row of each
// process sends what the sample sets), so a value the server lost (a row
// rejected, a process evicted and seen again) is back with the next batch.
// In the fixed-width form a process's comm goes only when it differs from
// the last one sent in the encoder's whole life (one Ingest stream): a
// server that takes that form keeps each stream's last comm per process
// and gives it back itself (server/ingest_stream.h, StreamComms). In the
// packed form, for any server, comm is an attribute like the others, sent
// again in every batch. A process exit or start forgets the process at
// once. A sample's jiffies, one
// counter for all processes, go only when they differ from the batch's
// last sent, as the server then runs at the session's jiffy, never behind
// them (docs/MODEL.md, Time in jiffies). A sample's cache_group is a
// per-row column, sent in either form only in a batch where some row names
// a group other than its own (0): the column is empty otherwise, which the
// server reads as every row 0, so a client that names no group sends the
// bytes it sent before cache groups existed.
#ifndef SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_
#define SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "events/event.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::client {

// Form is how the rows' timestamp_delta_ns, delta_ns and kind go:
// EventColumns' packed fields, which every server reads, or their
// fixed-width `_le` twins, for a server whose Session says
// takes_fixed_width_columns.
enum class ColumnsForm { kPacked, kFixedWidth };

// ColumnsEncoder appends events as rows of one EventColumns message, which
// must outlive it and be changed only through it. Thread-compatible.
class ColumnsEncoder {
 public:
  explicit ColumnsEncoder(v1::EventColumns& columns,
                          ColumnsForm form = ColumnsForm::kPacked)
      : columns_(columns), form_(form) {}

  // Add appends a row; the "unchanged" markers of Sample, and values this
  // batch has already sent for the process or thread, become unset
  // attributes, and a row with none set gets no SparseAttributes entry.
  void Add(const Sample& sample);
  void Add(const HandOver& handover);
  void Add(const ProcessExit& exit);
  void Add(const ProcessStart& start);
  // A kernel decision's fields beyond its row go to
  // EventColumns.kernel_decisions.
  void Add(const KernelDecision& decision);
  // Every row, in either form, appends one packed cpu.
  int rows() const { return columns_.cpu_size(); }
  // Clear empties the columns, keeping their storage, for the next batch
  // of the same stream (whose row 0 holds its full time again and which
  // sends every attribute again, but comm in the fixed-width form).
  void Clear();

 private:
  // AddRow appends the row's per-row columns; `cache_group` is a sample's
  // (kOwnCacheGroup for every other kind of row).
  void AddRow(int64_t timestamp_ns, int32_t cpu, int32_t tgid, int32_t tid,
              int64_t delta_ns, v1::EventKind kind,
              uint64_t cache_group = kOwnCacheGroup);

  // SentAttributes is what this batch has sent for one process and, by
  // tid, its threads (thread ids are per process in the engine), so a
  // process exit forgets them all in one erase.
  struct SentAttributes {
    int32_t nr_threads = kUnchangedNrThreads;
    int64_t footprint_pages = kUnchangedFootprint;
    absl::flat_hash_map<int32_t, int32_t> numa_node_by_tid;
  };
  // NewAttributes is the bit set of the attributes of `sample` to send,
  // and notes them as sent.
  uint32_t NewAttributes(const Sample& sample);

  v1::EventColumns& columns_;
  const ColumnsForm form_;
  int64_t last_timestamp_ns_ = 0;  // of the last row; 0 before row 0
  absl::flat_hash_map<int32_t, SentAttributes> sent_;  // by tgid
  // The last comm sent per process, by tgid: across batches in the
  // fixed-width form, within one in the packed form.
  absl::flat_hash_map<int32_t, Comm> sent_comm_;
  // The last jiffies this batch sent: the kernel's one counter, so one
  // value for every process.
  int64_t sent_jiffies_ = kDerivedJiffies;
};

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_
