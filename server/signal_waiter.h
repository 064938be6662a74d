// Signal handling for schedcached: SIGTERM and SIGINT are blocked in every
// thread and received synchronously by the main thread, so shutdown runs as
// ordinary code rather than inside a signal handler.
//
// Thread contract: BlockStopSignals must run in main before any thread
// starts (threads inherit the mask); WaitForStopSignal from main only.
#ifndef SCHEDCACHE_SERVER_SIGNAL_WAITER_H_
#define SCHEDCACHE_SERVER_SIGNAL_WAITER_H_

namespace schedcache {

// BlockStopSignals blocks SIGTERM and SIGINT in the calling thread.
void BlockStopSignals();

// WaitForStopSignal returns the first SIGTERM or SIGINT received.
int WaitForStopSignal();

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SIGNAL_WAITER_H_
