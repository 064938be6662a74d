// Signal handling for schedcached: SIGTERM, SIGINT and SIGHUP are blocked
// in every thread and received synchronously by the main thread, so
// shutdown and certificate reloads run as ordinary code rather than inside
// a signal handler.
//
// Thread contract: BlockServerSignals must run in main before any thread
// starts (threads inherit the mask); WaitForServerSignal from main only.
#ifndef SCHEDCACHE_SERVER_SIGNAL_WAITER_H_
#define SCHEDCACHE_SERVER_SIGNAL_WAITER_H_

namespace schedcache {

// BlockServerSignals blocks SIGTERM, SIGINT and SIGHUP in the calling
// thread.
void BlockServerSignals();

// WaitForServerSignal returns the next SIGTERM, SIGINT or SIGHUP received.
int WaitForServerSignal();

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SIGNAL_WAITER_H_
