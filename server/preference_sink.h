// PreferenceSink: where a session delivers its preference changes (one per
// open WatchPreferences stream).
//
// Delivery happens in two steps so that no lock is held while gRPC runs
// (gRPC may run reactions inline inside StartWrite/Finish): Enqueue is
// called with the session's lock held and only queues; Flush and Close are
// called with no lock held and may start writes.
#ifndef SCHEDCACHE_SERVER_PREFERENCE_SINK_H_
#define SCHEDCACHE_SERVER_PREFERENCE_SINK_H_

#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

class PreferenceSink {
 public:
  virtual ~PreferenceSink() = default;
  // Enqueue queues `change` (or counts it missed when the queue is full).
  // Returns true when the caller must call Flush() once its locks are
  // released. Thread-safe.
  virtual bool Enqueue(const v1::PreferenceChange& change) = 0;
  // Flush starts sending what Enqueue queued. REQUIRES: no lock held.
  virtual void Flush() = 0;
  // Close ends the stream with OK after the queued changes. REQUIRES: no
  // lock held. Idempotent.
  virtual void Close() = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_PREFERENCE_SINK_H_
