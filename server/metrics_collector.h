// MetricsCollector: schedcached's Prometheus metrics (docs/OPERATIONS.md
// lists them), read at scrape time. Every figure is one the server already
// keeps for its API: a session's counters and its engine's statistics
// (Session::Stats, the numbers behind GetSession and GetReport), the stream
// limiters' open counts, the watch streams' drop count. So ingesting
// records nothing for the metrics (no lock, no allocation, per sample or
// per batch), a scrape shows exactly what GetReport shows, and a deleted
// session's series are gone from the next scrape because the session is.
//
// Thread contract: thread-safe; Collect runs on the HTTP server's threads.
// `sessions` and `service` must outlive the collector's last Collect
// (MetricsEndpoint, destroyed first, guarantees it).
#ifndef SCHEDCACHE_SERVER_METRICS_COLLECTOR_H_
#define SCHEDCACHE_SERVER_METRICS_COLLECTOR_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "server/schedcache_service.h"
#include "server/session_manager.h"

namespace schedcache {

class MetricsCollector final : public prometheus::Collectable {
 public:
  MetricsCollector(const SessionManager& sessions,
                   const SchedCacheService& service)
      : sessions_(sessions), service_(service) {}

  // Collect takes each session's lock in turn, only to copy its counters
  // (Session::Stats), and builds the families outside it.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const SessionManager& sessions_;
  const SchedCacheService& service_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_METRICS_COLLECTOR_H_
