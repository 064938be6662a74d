#include "server/listen_address.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

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

class UnixSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/schedcache-listen-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  // Bind makes a socket file at `path`; with `listen` something answers.
  int Bind(const std::string& path, bool listen) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    if (listen) {
      EXPECT_EQ(::listen(fd, 1), 0);
    }
    return fd;
  }
  std::string dir_;
};

TEST_F(UnixSocketTest, CreatesEveryMissingDirectoryOwnerOnly) {
  const std::string path = dir_ + "/sub/dir/s.sock";
  ASSERT_TRUE(PrepareUnixSocket(path).ok());
  // The grandparent is made 0700 too, not with the umask's 0755.
  for (const std::string& made : {dir_ + "/sub", dir_ + "/sub/dir"}) {
    struct stat info;
    ASSERT_EQ(::stat(made.c_str(), &info), 0) << made;
    EXPECT_TRUE(S_ISDIR(info.st_mode)) << made;
    EXPECT_EQ(info.st_mode & 0777, 0700) << made;
  }
}

TEST_F(UnixSocketTest, ReplacesStaleSocket) {
  const std::string path = dir_ + "/s.sock";
  ::close(Bind(path, /*listen=*/false));  // a socket file nobody answers on
  ASSERT_TRUE(PrepareUnixSocket(path).ok());
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

TEST_F(UnixSocketTest, RefusesSocketWithLiveServer) {
  const std::string path = dir_ + "/s.sock";
  const int fd = Bind(path, /*listen=*/true);
  EXPECT_EQ(PrepareUnixSocket(path).code(), absl::StatusCode::kAlreadyExists);
  ::close(fd);
}

TEST_F(UnixSocketTest, RefusesRegularFile) {
  const std::string path = dir_ + "/not-a-socket";
  std::ofstream(path) << "data";
  EXPECT_EQ(PrepareUnixSocket(path).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(UnixSocketTest, RestrictSetsMode0600) {
  const std::string path = dir_ + "/s.sock";
  ::close(Bind(path, /*listen=*/false));
  ASSERT_TRUE(RestrictUnixSocket(path).ok());
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
}

}  // namespace
}  // namespace schedcache
