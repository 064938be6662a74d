// StopSignals lets a long-running verb (record, mirror) stop cleanly on
// SIGINT and SIGTERM: the constructor blocks both in the constructing
// thread, and so in every thread started after it (gRPC's too), so no
// thread dies of them; Watch starts a thread that waits for one and runs
// the verb's stop action. A signal that came before Watch is pending and
// counts. Construct it first, before anything starts a thread.
//
// Thread contract: construct, Watch, Disarm and destroy on one thread;
// signalled() from any.
#ifndef SCHEDCACHE_CLI_STOP_SIGNALS_H_
#define SCHEDCACHE_CLI_STOP_SIGNALS_H_

#include <signal.h>

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace schedcache::cli {

class StopSignals {
 public:
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // Disarms, then restores the thread's signal mask.
  ~StopSignals();

  // Watch runs `on_signal` (in the waiter thread) on the first SIGINT or
  // SIGTERM. Call at most once.
  void Watch(std::function<void()> on_signal);

  // Disarm ends the waiter, so `on_signal` does not run after it returns;
  // call it before what `on_signal` touches is destroyed.
  void Disarm();

  // signalled is true once a signal ran `on_signal`.
  bool signalled() ABSL_LOCKS_EXCLUDED(mutex_);

 private:
  sigset_t signals_;
  sigset_t previous_mask_;
  std::thread waiter_;
  absl::Mutex mutex_;
  bool finishing_ ABSL_GUARDED_BY(mutex_) = false;
  bool signalled_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_STOP_SIGNALS_H_
