// MetricsEndpoint: the Prometheus text exposition of a collectable at
// http://ADDRESS/metrics, served by prometheus-cpp's pull Exposer (an
// embedded civetweb HTTP server with its own threads), apart from the gRPC
// listeners. `schedcached --metrics_listen`.
//
// Thread contract: thread-safe. Destroying the endpoint stops the HTTP
// server and waits for a scrape in progress, so what the collectable reads
// needs to outlive the endpoint only.
#ifndef SCHEDCACHE_SERVER_METRICS_ENDPOINT_H_
#define SCHEDCACHE_SERVER_METRICS_ENDPOINT_H_

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/listen_address.h"

namespace schedcache {

// ParseMetricsAddress reads a --metrics_listen value: "PORT" or ":PORT"
// (127.0.0.1:PORT), or "HOST:PORT" with an IPv4 address or a host name;
// port 0 picks a free port. InvalidArgument naming the value otherwise: a
// Unix socket or an IPv6 address (the embedded HTTP server of Debian's
// prometheus-cpp does not bind one).
absl::StatusOr<ListenAddress> ParseMetricsAddress(absl::string_view text);

class MetricsEndpoint {
 public:
  // Start serves `collectable` on `address`. Unavailable, naming the
  // address, when it cannot be bound (in use, no permission, not an address
  // of this host).
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const ListenAddress& address,
      std::shared_ptr<prometheus::Collectable> collectable);

  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // address is "HOST:PORT" with port 0 resolved.
  const std::string& address() const { return address_; }

 private:
  MetricsEndpoint(std::unique_ptr<prometheus::Exposer> exposer,
                  std::shared_ptr<prometheus::Collectable> collectable,
                  std::string address)
      : collectable_(std::move(collectable)),
        exposer_(std::move(exposer)),
        address_(std::move(address)) {}

  // The exposer holds only a weak pointer; declared first, the collectable
  // is destroyed after the exposer has stopped.
  std::shared_ptr<prometheus::Collectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string address_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_METRICS_ENDPOINT_H_
