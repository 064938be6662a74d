#include "server/signal_waiter.h"

#include <pthread.h>
#include <signal.h>

namespace schedcache {
namespace {

sigset_t ServerSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  return signals;
}

}  // namespace

void BlockServerSignals() {
  const sigset_t signals = ServerSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

int WaitForServerSignal() {
  const sigset_t signals = ServerSignals();
  int received = 0;
  while (sigwait(&signals, &received) != 0) {
  }
  return received;
}

}  // namespace schedcache
