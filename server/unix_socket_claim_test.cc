#include "server/unix_socket_claim.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

class UnixSocketClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "schedcache-claim-XXXXXX")
            .string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/s.sock";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Bind makes a socket file at `path` and returns its descriptor; with
  // `listen` something answers on it.
  static int Bind(const std::string& path, bool listen) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << path;
    if (listen) {
      EXPECT_EQ(::listen(fd, 1), 0);
    }
    return fd;
  }

  static struct stat Stat(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
    return info;
  }

  static bool Exists(const std::string& path) {
    struct stat info;
    return ::lstat(path.c_str(), &info) == 0;
  }

  // ClaimAndPublish claims path_, binds a listening socket where the claim
  // says, and publishes it; `fd` receives the socket.
  std::unique_ptr<UnixSocketClaim> ClaimAndPublish(int& fd,
                                                   SocketAccess access = {}) {
    absl::StatusOr<std::unique_ptr<UnixSocketClaim>> claim =
        UnixSocketClaim::Claim(path_, access);
    EXPECT_TRUE(claim.ok()) << claim.status();
    if (!claim.ok()) return nullptr;
    fd = Bind((*claim)->bind_path(), /*listen=*/true);
    const absl::Status published = (*claim)->Publish();
    EXPECT_TRUE(published.ok()) << published;
    return *std::move(claim);
  }

  std::string dir_;
  std::string path_;
};

TEST_F(UnixSocketClaimTest, CreatesEveryMissingDirectoryOwnerOnly) {
  path_ = dir_ + "/sub/dir/s.sock";
  absl::StatusOr<std::unique_ptr<UnixSocketClaim>> claim =
      UnixSocketClaim::Claim(path_);
  ASSERT_TRUE(claim.ok()) << claim.status();
  // The grandparent is made 0700 too, not with the umask's 0755.
  for (const std::string& made : {dir_ + "/sub", dir_ + "/sub/dir"}) {
    EXPECT_TRUE(S_ISDIR(Stat(made).st_mode)) << made;
    EXPECT_EQ(Stat(made).st_mode & 0777, 0700) << made;
  }
}

TEST_F(UnixSocketClaimTest, BindsInAPrivateDirectoryThenPublishesMode0600) {
  absl::StatusOr<std::unique_ptr<UnixSocketClaim>> claim =
      UnixSocketClaim::Claim(path_);
  ASSERT_TRUE(claim.ok()) << claim.status();
  const std::string bind_path = (*claim)->bind_path();
  const std::string private_dir =
      std::filesystem::path(bind_path).parent_path().string();
  // Before publishing, nothing is at the path, and the socket's directory
  // lets only its owner in, whatever mode bind gives the socket.
  const int fd = Bind(bind_path, /*listen=*/true);
  EXPECT_FALSE(Exists(path_));
  EXPECT_EQ(Stat(private_dir).st_mode & 0777, 0700);
  ASSERT_TRUE((*claim)->Publish().ok());
  EXPECT_TRUE(S_ISSOCK(Stat(path_).st_mode));
  EXPECT_EQ(Stat(path_).st_mode & 0777, 0600);
  EXPECT_FALSE(Exists(private_dir));
  ::close(fd);
}

TEST_F(UnixSocketClaimTest, SecondClaimIsRefusedWhileTheFirstHoldsTheLock) {
  int fd = -1;
  std::unique_ptr<UnixSocketClaim> first = ClaimAndPublish(fd);
  ASSERT_NE(first, nullptr);
  const ino_t inode = Stat(path_).st_ino;
  absl::StatusOr<std::unique_ptr<UnixSocketClaim>> second =
      UnixSocketClaim::Claim(path_);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(second.status().message(), "another server owns " + path_ +
                                           " (it holds the lock " + path_ +
                                           ".lock)");
  // The refused claim left the first one's socket alone.
  EXPECT_EQ(Stat(path_).st_ino, inode);
  ::close(fd);
}

TEST_F(UnixSocketClaimTest, ReleaseRemovesOnlyItsOwnSocket) {
  int fd = -1;
  std::unique_ptr<UnixSocketClaim> claim = ClaimAndPublish(fd);
  ASSERT_NE(claim, nullptr);
  // Someone replaced the socket meanwhile: the release must leave theirs.
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  const int theirs = Bind(path_, /*listen=*/false);
  const ino_t their_inode = Stat(path_).st_ino;
  claim->Release();
  EXPECT_EQ(Stat(path_).st_ino, their_inode);
  ::close(theirs);
  ::close(fd);
}

TEST_F(UnixSocketClaimTest, ReleaseRemovesItsSocketAndFreesTheLock) {
  int fd = -1;
  std::unique_ptr<UnixSocketClaim> claim = ClaimAndPublish(fd);
  ASSERT_NE(claim, nullptr);
  claim->Release();
  ::close(fd);
  EXPECT_FALSE(Exists(path_));
  // The lock file stays (see the header); the lock itself is free.
  EXPECT_TRUE(Exists(path_ + ".lock"));
  EXPECT_TRUE(UnixSocketClaim::Claim(path_).ok());
}

TEST_F(UnixSocketClaimTest, StaleSocketIsReplacedOnPublish) {
  ::close(Bind(path_, /*listen=*/false));  // a socket nobody answers on
  const ino_t stale = Stat(path_).st_ino;
  int fd = -1;
  std::unique_ptr<UnixSocketClaim> claim = ClaimAndPublish(fd);
  ASSERT_NE(claim, nullptr);
  EXPECT_NE(Stat(path_).st_ino, stale);
  ::close(fd);
}

TEST_F(UnixSocketClaimTest, LiveSocketWithoutLockIsRefused) {
  const int fd = Bind(path_, /*listen=*/true);
  absl::StatusOr<std::unique_ptr<UnixSocketClaim>> claim =
      UnixSocketClaim::Claim(path_);
  EXPECT_EQ(claim.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(claim.status().message(), HasSubstr("already answers"));
  ::close(fd);
}

TEST_F(UnixSocketClaimTest, RegularFileIsRefused) {
  std::ofstream(path_) << "data";
  absl::StatusOr<std::unique_ptr<UnixSocketClaim>> claim =
      UnixSocketClaim::Claim(path_);
  EXPECT_EQ(claim.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(claim.status().message(), HasSubstr(path_));
  // The refused claim removed its private directory.
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(left, ::testing::UnorderedElementsAre("s.sock", "s.sock.lock"));
}

TEST_F(UnixSocketClaimTest, LockFileThatIsNotAFileIsRefused) {
  ASSERT_EQ(::mkdir((path_ + ".lock").c_str(), 0700), 0);
  EXPECT_FALSE(UnixSocketClaim::Claim(path_).ok());
}

TEST_F(UnixSocketClaimTest, PublishesWithTheClaimsModeAndGroup) {
  // The process's own group: the one group chown to it always allows.
  SocketAccess access;
  access.mode = 0660;
  access.group = ::getgid();
  int fd = -1;
  std::unique_ptr<UnixSocketClaim> claim = ClaimAndPublish(fd, access);
  ASSERT_NE(claim, nullptr);
  const struct stat info = Stat(path_);
  EXPECT_EQ(info.st_mode & 07777, 0660u);
  EXPECT_EQ(info.st_gid, ::getgid());
  ::close(fd);
}

TEST(ParseSocketAccess, ReadsOctalModesAndGroupsByNameOrNumber) {
  absl::StatusOr<SocketAccess> defaults = ParseSocketAccess("0600", "");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->mode, 0600u);
  EXPECT_FALSE(defaults->group.has_value());
  // 660 and 0660 are the same octal mode (6*64 + 6*8 = 432).
  absl::StatusOr<SocketAccess> shared = ParseSocketAccess("660", "1234");
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->mode, 432u);
  EXPECT_EQ(shared->group, absl::optional<gid_t>(1234));
  // Group 0 is named "root" on every Debian system.
  absl::StatusOr<SocketAccess> root = ParseSocketAccess("0600", "root");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->group, absl::optional<gid_t>(0));
}

TEST(ParseSocketAccess, RejectsBadModesAndUnknownGroupsNamingTheValue) {
  for (const char* bad : {"", "0999", "01777", "12345", "rw", "-600"}) {
    const absl::Status status = ParseSocketAccess(bad, "").status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(),
                HasSubstr(std::string("--socket_mode=") + bad + " is not"));
  }
  const absl::Status unknown =
      ParseSocketAccess("0600", "no-such-group-here").status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("--socket_group=no-such-group-here: no such group"));
}

}  // namespace
}  // namespace schedcache
