#include "cli/stop_signals.h"

#include <pthread.h>

#include <utility>

namespace schedcache::cli {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, &previous_mask_);
}

StopSignals::~StopSignals() {
  Disarm();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void StopSignals::Watch(std::function<void()> on_signal) {
  waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
    int received = 0;
    while (sigwait(&signals_, &received) != 0) {
    }
    {
      absl::MutexLock lock(&mutex_);
      if (finishing_) return;
      signalled_ = true;
    }
    on_signal();
  });
}

// The waiter is woken by a SIGTERM aimed at it alone, which it recognises
// as the end by finishing_.
void StopSignals::Disarm() {
  if (!waiter_.joinable()) return;
  {
    absl::MutexLock lock(&mutex_);
    finishing_ = true;
  }
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

bool StopSignals::signalled() {
  absl::MutexLock lock(&mutex_);
  return signalled_;
}

}  // namespace schedcache::cli
