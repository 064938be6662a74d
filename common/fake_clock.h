// FakeClock: a Clock for tests that stands still until the test advances
// it, so a test makes a deadline pass by moving the clock, never by
// sleeping.
//
// Thread contract: thread-safe; the code under test may read it on its own
// threads while the test advances it.
#ifndef SCHEDCACHE_COMMON_FAKE_CLOCK_H_
#define SCHEDCACHE_COMMON_FAKE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace schedcache {

class FakeClock final : public Clock {
 public:
  // FakeClock starts at `start`; real deadlines (gRPC's, say) compare with
  // it, so a test that mixes them starts it at the real time.
  explicit FakeClock(absl::Time start) : now_(start) {}

  absl::Time Now() const override ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return now_;
  }

  void Advance(absl::Duration by) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    now_ += by;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_FAKE_CLOCK_H_
