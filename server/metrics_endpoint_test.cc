#include "server/metrics_endpoint.h"

#include <prometheus/metric_family.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

TEST(ParseMetricsAddress, BarePortAndColonPortMeanLoopback) {
  for (const char* text : {"9464", ":9464"}) {
    absl::StatusOr<ListenAddress> address = ParseMetricsAddress(text);
    ASSERT_TRUE(address.ok()) << text << ": " << address.status();
    EXPECT_EQ(address->ToGrpcUri(), "127.0.0.1:9464") << text;
  }
}

TEST(ParseMetricsAddress, HostAndPort) {
  absl::StatusOr<ListenAddress> address = ParseMetricsAddress("0.0.0.0:0");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->ToGrpcUri(), "0.0.0.0:0");
  EXPECT_FALSE(address->IsLoopback());
}

TEST(ParseMetricsAddress, RefusesUnixIpv6AndNonsenseNamingTheValue) {
  EXPECT_THAT(ParseMetricsAddress("unix:/tmp/m.sock").status().message(),
              HasSubstr("--metrics_listen=unix:/tmp/m.sock: metrics are "
                        "served over HTTP on TCP only"));
  EXPECT_THAT(ParseMetricsAddress("[::1]:9464").status().message(),
              HasSubstr("--metrics_listen=[::1]:9464: IPv6 is not supported"));
  EXPECT_THAT(ParseMetricsAddress("99999").status().message(),
              HasSubstr("port \"99999\" is not a number in 0..65535"));
  EXPECT_THAT(ParseMetricsAddress("").status().message(),
              HasSubstr("--metrics_listen: listen address \"\""));
}

// NoMetrics is a collectable with nothing to collect.
class NoMetrics : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override { return {}; }
};

TEST(MetricsEndpoint, PortZeroResolvesAndABoundPortIsUnavailable) {
  absl::StatusOr<ListenAddress> any = ParseMetricsAddress("127.0.0.1:0");
  ASSERT_TRUE(any.ok());
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> first =
      MetricsEndpoint::Start(*any, std::make_shared<NoMetrics>());
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string address = (*first)->address();
  EXPECT_THAT(address, ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(address, "127.0.0.1:0");

  absl::StatusOr<ListenAddress> same = ParseMetricsAddress(address);
  ASSERT_TRUE(same.ok());
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> second =
      MetricsEndpoint::Start(*same, std::make_shared<NoMetrics>());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(),
              HasSubstr("cannot serve metrics on " + address));
}

}  // namespace
}  // namespace schedcache
