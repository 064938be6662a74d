// StreamSink, PreferenceSink, ScanSink: where a session delivers what its
// watch streams read: one PreferenceSink per open WatchPreferences stream
// (preference changes), one ScanSink per open WatchScans stream (executed
// scans).
//
// Delivery happens in two steps so that no lock is held while gRPC runs
// (gRPC may run reactions inline inside StartWrite/Finish): the Enqueue
// calls are made with the session's lock held and only queue; Flush and
// Close are called with no lock held and may start writes.
#ifndef SCHEDCACHE_SERVER_STREAM_SINK_H_
#define SCHEDCACHE_SERVER_STREAM_SINK_H_

#include <vector>

#include "absl/status/status.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

// StreamSink is what every kind of sink does once its session's lock is
// released.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Flush starts sending what was queued. REQUIRES: no lock held.
  virtual void Flush() = 0;
  // Close ends the stream with `why` after what was queued. REQUIRES: no
  // lock held. Idempotent: the first status wins.
  virtual void Close(const absl::Status& why) = 0;
};

class PreferenceSink : public StreamSink {
 public:
  // EnqueueStart queues what the stream sends before any change (a
  // snapshot or a replay, then Synced); never dropped, whatever its size.
  // Called once, before any Enqueue. Returns true when the caller
  // must call Flush() once its locks are released. Thread-safe.
  virtual bool EnqueueStart(
      std::vector<v1::WatchPreferencesResponse> start) = 0;
  // Enqueue queues `change` (or counts it missed when the queue of changes
  // is full). Returns as EnqueueStart. Thread-safe.
  virtual bool Enqueue(const v1::PreferenceChange& change) = 0;
};

class ScanSink : public StreamSink {
 public:
  // Enqueue queues `scan` (or counts it dropped when the queue is full).
  // Returns true when the caller must call Flush() once its locks are
  // released. Thread-safe.
  virtual bool Enqueue(const v1::ScanEvent& scan) = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_STREAM_SINK_H_
