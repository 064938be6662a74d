// Sample/HandOver/ProcessExit -> rows of schedcache.v1.EventColumns, the client half of
// the ingest path (the server's inverse is server/proto_convert.h). Appends
// to columns the batch already holds, so a reused batch allocates nothing
// per event once its columns have grown.
#ifndef SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_
#define SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_

#include <cstdint>

#include "events/event.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::client {

// ColumnsEncoder appends events as rows of one EventColumns message, which
// must outlive it and be changed only through it. Thread-compatible.
class ColumnsEncoder {
 public:
  explicit ColumnsEncoder(v1::EventColumns& columns) : columns_(columns) {}

  // Add appends a row; the "unchanged" markers of Sample become unset
  // attributes, and a row with none set gets no SparseAttributes entry.
  void Add(const Sample& sample);
  void Add(const HandOver& handover);
  void Add(const ProcessExit& exit);
  int rows() const { return columns_.timestamp_delta_ns_size(); }
  // Clear empties the columns, keeping their storage, for the next batch
  // (whose row 0 holds its full time again).
  void Clear();

 private:
  void AddRow(int64_t timestamp_ns, int32_t cpu, int32_t tgid, int32_t tid,
              int64_t delta_ns, v1::EventKind kind);

  v1::EventColumns& columns_;
  int64_t last_timestamp_ns_ = 0;  // of the last row; 0 before row 0
};

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_LIB_COLUMNS_ENCODER_H_
