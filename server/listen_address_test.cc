#include "server/listen_address.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(ParseListenAddress, UnixPath) {
  absl::StatusOr<ListenAddress> address = ParseListenAddress("unix:/tmp/a.sock");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->kind, ListenAddress::Kind::kUnix);
  EXPECT_EQ(address->path, "/tmp/a.sock");
  EXPECT_EQ(address->ToGrpcUri(), "unix:/tmp/a.sock");
}

TEST(ParseListenAddress, PortWithoutHostMeansLoopback) {
  absl::StatusOr<ListenAddress> address = ParseListenAddress(":7000");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->kind, ListenAddress::Kind::kTcp);
  EXPECT_EQ(address->ToGrpcUri(), "127.0.0.1:7000");
}

TEST(ParseListenAddress, HostAndIpv6) {
  absl::StatusOr<ListenAddress> v4 = ParseListenAddress("0.0.0.0:0");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->WithPort(41).ToGrpcUri(), "0.0.0.0:41");
  absl::StatusOr<ListenAddress> v6 = ParseListenAddress("[::1]:9");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->ToGrpcUri(), "[::1]:9");
}

TEST(ParseListenAddress, RejectsBadInput) {
  for (const char* bad : {"unix:", "localhost", "host:port", "host:70000",
                          "[::1:5", "host:-1"}) {
    EXPECT_EQ(ParseListenAddress(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ParseListenAddress, UnixPathLeavesRoomForTheBindPath) {
  // sockaddr_un holds 107 bytes of path; the socket is first bound at
  // PATH.XXXXXX/s, 9 bytes longer, so PATH may have 98.
  EXPECT_TRUE(ParseListenAddress("unix:" + std::string(98, 'a')).ok());
  absl::StatusOr<ListenAddress> long_path =
      ParseListenAddress("unix:" + std::string(99, 'a'));
  EXPECT_EQ(long_path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(long_path.status().message(),
              ::testing::HasSubstr("is longer than 98 bytes"));
}

}  // namespace
}  // namespace schedcache
