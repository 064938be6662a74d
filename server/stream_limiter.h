// StreamLimiter counts the open streams of one kind against its limit:
// Ingest streams against --max_streams, WatchPreferences streams against
// --max_watch_streams, so that idle watches can never lock out Ingest.
//
// Thread contract: thread-safe.
#ifndef SCHEDCACHE_SERVER_STREAM_LIMITER_H_
#define SCHEDCACHE_SERVER_STREAM_LIMITER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace schedcache {

class StreamLimiter {
 public:
  // `kind` ("Ingest") and `flag` ("--max_streams") name the streams and
  // their limit in the error.
  StreamLimiter(int max_streams, absl::string_view kind, absl::string_view flag)
      : max_streams_(max_streams), kind_(kind), flag_(flag) {}

  // Admit counts a new stream, or returns ResourceExhausted (naming the
  // kind and the flag) when `max_streams` are open. Each OK Admit needs one
  // Release.
  absl::Status Admit() ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  // open is how many streams are admitted and not yet released.
  int open() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int max_streams_;
  const std::string kind_;
  const std::string flag_;
  mutable absl::Mutex mu_;
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_STREAM_LIMITER_H_
