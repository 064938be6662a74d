// StreamLimiter counts the open Ingest and WatchPreferences streams against
// --max_streams.
//
// Thread contract: thread-safe.
#ifndef SCHEDCACHE_SERVER_STREAM_LIMITER_H_
#define SCHEDCACHE_SERVER_STREAM_LIMITER_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace schedcache {

class StreamLimiter {
 public:
  explicit StreamLimiter(int max_streams) : max_streams_(max_streams) {}

  // Admit counts a new stream, or returns ResourceExhausted (naming the
  // flag) when --max_streams are open. Each OK Admit needs one Release.
  absl::Status Admit() ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int max_streams_;
  absl::Mutex mu_;
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_STREAM_LIMITER_H_
