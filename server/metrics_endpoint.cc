#include "server/metrics_endpoint.h"

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace schedcache {

absl::StatusOr<ListenAddress> ParseMetricsAddress(absl::string_view text) {
  if (absl::StartsWith(text, "unix:")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics_listen=", text,
        ": metrics are served over HTTP on TCP only (PORT or HOST:PORT)"));
  }
  // A bare port means loopback, as ":PORT" does.
  const bool bare_port = !text.empty() && std::all_of(text.begin(), text.end(),
                                                      absl::ascii_isdigit);
  absl::StatusOr<ListenAddress> address = ParseListenAddress(
      bare_port ? absl::StrCat(":", text) : std::string(text));
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics_listen: ", address.status().message()));
  }
  if (absl::StrContains(address->host, ':')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics_listen=", text,
        ": IPv6 is not supported (prometheus-cpp's HTTP server binds IPv4 "
        "addresses and host names only)"));
  }
  return address;
}

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const ListenAddress& address,
    std::shared_ptr<prometheus::Collectable> collectable) {
  const std::string bind = address.ToGrpcUri();
  std::unique_ptr<prometheus::Exposer> exposer;
  // prometheus-cpp reports a failed bind with an exception (civetweb's);
  // this is the one place it is caught and becomes a status.
  try {
    exposer = std::make_unique<prometheus::Exposer>(bind, /*num_threads=*/2);
  } catch (const std::exception& error) {
    return absl::UnavailableError(absl::StrCat(
        "cannot serve metrics on ", bind,
        " (address in use, no permission, or not an address of this host): ",
        error.what()));
  }
  const std::vector<int> ports = exposer->GetListeningPorts();
  if (ports.size() != 1) {
    return absl::InternalError(absl::StrCat("metrics on ", bind, " listen on ",
                                            ports.size(), " ports, not 1"));
  }
  exposer->RegisterCollectable(collectable);
  return std::unique_ptr<MetricsEndpoint>(
      new MetricsEndpoint(std::move(exposer), std::move(collectable),
                          address.WithPort(ports.front()).ToGrpcUri()));
}

}  // namespace schedcache
