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

TEST(ListenAddress, IsLoopbackOnlyForAddressesNoOtherHostReaches) {
  for (const char* loopback : {"127.0.0.1:1", "127.8.9.10:1", ":1", "[::1]:1",
                               "localhost:1", "[::ffff:127.0.0.1]:1"}) {
    absl::StatusOr<ListenAddress> address = ParseListenAddress(loopback);
    ASSERT_TRUE(address.ok()) << loopback << ": " << address.status();
    EXPECT_TRUE(address->IsLoopback()) << loopback;
  }
  // A name other than localhost may resolve anywhere; :: and 0.0.0.0 are
  // every interface; 128.0.0.1 is just past 127/8.
  for (const char* outside :
       {"0.0.0.0:1", "[::]:1", "10.0.0.1:1", "128.0.0.1:1", "example.com:1",
        "[::ffff:10.0.0.1]:1", "unix:/tmp/s"}) {
    absl::StatusOr<ListenAddress> address = ParseListenAddress(outside);
    ASSERT_TRUE(address.ok()) << outside << ": " << address.status();
    EXPECT_FALSE(address->IsLoopback()) << outside;
  }
}

}  // namespace
}  // namespace schedcache
