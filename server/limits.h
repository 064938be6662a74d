// Limits: the server's resource bounds, each a schedcached flag. Hitting one
// yields RESOURCE_EXHAUSTED (or INVALID_ARGUMENT for an oversized batch)
// with a message that names the limit and its flag.
#ifndef SCHEDCACHE_SERVER_LIMITS_H_
#define SCHEDCACHE_SERVER_LIMITS_H_

#include <cstdint>

namespace schedcache {

struct Limits {
  // Sessions alive at once, `default` included (--max_sessions).
  int max_sessions = 64;
  // Processes tracked per session; beyond it the least recently sampled one
  // is evicted and counted (--max_processes).
  int64_t max_processes = 100'000;
  // Events in one IngestBatch (--max_batch_events).
  int max_batch_events = 65'536;
  // Largest message received, bytes (--max_message_bytes). 64 MiB holds a
  // maximal batch with long comms.
  int max_message_bytes = 64 << 20;
  // Ingest streams open at once (--max_streams).
  int max_streams = 256;
  // WatchPreferences streams open at once (--max_watch_streams), counted
  // apart from Ingest so that idle watches cannot lock Ingest out.
  int max_watch_streams = 256;
  // Preference changes buffered per watcher before they are dropped and
  // counted as missed (--max_watch_queue).
  int max_watch_queue = 65'536;
  // Latest preference changes each session retains, so that a watcher
  // whose stream broke resumes without a snapshot (--watch_history; 0:
  // none, every resume gets a snapshot).
  int watch_history = 4'096;
  // CPUs a session's synthetic or XML topology may have
  // (--max_topology_cpus); see TopologyLimits for why.
  int64_t max_topology_cpus = 16'384;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_LIMITS_H_
