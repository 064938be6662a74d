// schedcached as a process: its Unix socket under a permissive umask, two
// servers racing for one path, and SIGTERM while hwloc is building a
// session's topology. Waits are on events (inotify, pidfd, RPC answers),
// never on sleeps.
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

using test_support::ReadFile;

using ::testing::HasSubstr;

const std::string kSchedcached =
    std::string(SCHEDCACHE_BINARY_DIR) + "/bin/schedcached";

std::unique_ptr<client::Client> ClientOf(const std::string& socket) {
  client::Options options;
  options.address = "unix:" + socket;
  return client::Client::Connect(options);
}

struct FileEvent {
  uint32_t mask;
  std::string name;
};

// DrainEvents reads every event queued on a non-blocking inotify descriptor.
std::vector<FileEvent> DrainEvents(int fd) {
  std::vector<FileEvent> events;
  alignas(inotify_event) char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      events.push_back({event->mask, event->len > 0 ? event->name : ""});
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  return events;
}

TEST(SchedcachedSocket, NeverWiderThanItsFinalModeUnderUmask000) {
  TempDir dir;
  const std::string run = dir.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, run.c_str(), IN_CREATE | IN_MOVED_TO),
            0);
  const std::string socket = run + "/s.sock";
  std::unique_ptr<Process> server = Process::Start(
      {"/bin/sh", "-c",
       "umask 000 && exec " + kSchedcached + " --listen=unix:" + socket},
      dir.path() + "/server.log");
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok())
      << ReadFile(dir.path() + "/server.log");

  // bind() never ran in `run`: the socket arrived there by rename, already
  // 0600. What was created there is the lock file and the private
  // directory the socket was bound in (mode 0700, so unreachable).
  bool socket_created = false;
  int socket_moved_in = 0;
  std::vector<std::string> created;
  for (const FileEvent& event : DrainEvents(watch)) {
    if (event.name == "s.sock") {
      socket_created |= (event.mask & IN_CREATE) != 0;
      socket_moved_in += (event.mask & IN_MOVED_TO) != 0 ? 1 : 0;
    } else if ((event.mask & IN_CREATE) != 0) {
      created.push_back(event.name + ((event.mask & IN_ISDIR) != 0 ? "/" : ""));
    }
  }
  ::close(watch);
  EXPECT_FALSE(socket_created);
  EXPECT_EQ(socket_moved_in, 1);
  EXPECT_THAT(created, ::testing::UnorderedElementsAre(
                           "s.sock.lock",
                           ::testing::MatchesRegex("s\\.sock\\.......[/]")));
  struct stat info;
  ASSERT_EQ(::stat(socket.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat((socket + ".lock").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  server->Signal(SIGTERM);
  EXPECT_EQ(server->WaitForExit(absl::Seconds(30)), 0);
}

TEST(SchedcachedSocket, TwoServersRacingForOnePathExactlyOneServes) {
  TempDir dir;
  const std::string socket = dir.path() + "/run/s.sock";
  std::vector<std::unique_ptr<Process>> servers;
  for (int i = 0; i < 2; ++i) {
    servers.push_back(
        Process::Start({kSchedcached, "--listen=unix:" + socket},
                       dir.path() + "/server" + std::to_string(i) + ".log"));
    ASSERT_NE(servers.back(), nullptr);
  }
  const std::optional<size_t> first = Process::WaitForFirstExit(
      {servers[0].get(), servers[1].get()}, absl::Seconds(60));
  ASSERT_TRUE(first.has_value()) << "neither server exited";
  const size_t loser = *first;
  const size_t winner = 1 - loser;
  EXPECT_EQ(servers[loser]->WaitForExit(absl::Seconds(10)), 1);
  EXPECT_THAT(ReadFile(dir.path() + "/server" + std::to_string(loser) + ".log"),
              HasSubstr("another server owns " + socket +
                        " (it holds the lock " + socket + ".lock)"));
  // The loser never touched the path: the winner serves on it.
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok());
  EXPECT_TRUE(ClientOf(socket)->ListSessions().ok());
  EXPECT_EQ(servers[winner]->WaitForExit(absl::ZeroDuration()), std::nullopt);

  servers[winner]->Signal(SIGTERM);
  EXPECT_EQ(servers[winner]->WaitForExit(absl::Seconds(30)), 0);
  struct stat info;
  EXPECT_NE(::stat(socket.c_str(), &info), 0);
  // A third server takes the path once it is free.
  std::unique_ptr<Process> third = Process::Start(
      {kSchedcached, "--listen=unix:" + socket}, dir.path() + "/third.log");
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok());
  third->Signal(SIGTERM);
  EXPECT_EQ(third->WaitForExit(absl::Seconds(30)), 0);
}

TEST(SchedcachedShutdown, SigtermDoesNotWaitForATopologyBuild) {
  TempDir dir;
  const std::string socket = dir.path() + "/s.sock";
  const std::string log = dir.path() + "/server.log";
  // One core of 60,000 PUs: hwloc needs many minutes for it (one of
  // 12,000 takes ~20 s, and the cost grows faster than linearly).
  std::unique_ptr<Process> server = Process::Start(
      {kSchedcached, "--listen=unix:" + socket, "--max_topology_cpus=100000",
       "--shutdown_grace_seconds=1"},
      log);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok()) << ReadFile(log);

  client::Options impatient;
  impatient.address = "unix:" + socket;
  impatient.deadline = absl::Seconds(1);
  v1::CreateSessionRequest big = TwoLlcSessionRequest("big");
  big.mutable_topology()->set_spec("synthetic:pack:1 l3:1 core:1 pu:60000");
  EXPECT_EQ(
      client::Client::Connect(impatient)->CreateSession(big).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  // The build goes on after its call expired: it still holds the name.
  absl::Status probe =
      ClientOf(socket)->CreateSession(TwoLlcSessionRequest("big")).status();
  ASSERT_EQ(probe.code(), absl::StatusCode::kAlreadyExists) << probe;
  ASSERT_THAT(probe.message(), HasSubstr("is being created"));

  server->Signal(SIGTERM);
  EXPECT_EQ(server->WaitForExit(absl::Seconds(30)), 0)
      << "schedcached waited for the build";
  EXPECT_THAT(ReadFile(log),
              HasSubstr("abandoning 1 session build(s) in progress"));
  struct stat info;
  EXPECT_NE(::stat(socket.c_str(), &info), 0);
}

TEST(SchedcachedStateDir, AnUnwritableStateDirExitsTwoSayingSo) {
  TempDir dir;
  // /proc takes no new files, not even root's.
  const CommandResult refused = RunCommand(
      {kSchedcached, "--listen=unix:" + dir.path() + "/s.sock",
       "--state_dir=/proc"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err,
              HasSubstr("--state_dir: /proc: the state directory is not "
                        "writable: creating a file failed: "));
  const CommandResult no_parent = RunCommand(
      {kSchedcached, "--listen=unix:" + dir.path() + "/s.sock",
       "--state_dir=" + dir.path() + "/missing/state"});
  EXPECT_EQ(no_parent.exit_code, 2);
  EXPECT_THAT(no_parent.err,
              HasSubstr(dir.path() + "/missing/state: creating the state "
                        "directory (mkdir) failed: No such file or directory"));
}

TEST(SchedcachedStateDir, ARestartKeepsNamedSessionsAndLogsASkippedFile) {
  TempDir dir;
  const std::string socket = dir.path() + "/s.sock";
  const std::string state = dir.path() + "/state";
  const std::vector<std::string> command = {
      kSchedcached, "--listen=unix:" + socket, "--state_dir=" + state};
  std::unique_ptr<Process> first =
      Process::Start(command, dir.path() + "/first.log");
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok())
      << ReadFile(dir.path() + "/first.log");
  struct stat info;
  ASSERT_EQ(::stat(state.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
  ASSERT_TRUE(ClientOf(socket)->CreateSession(TwoLlcSessionRequest("a")).ok());
  first->Signal(SIGTERM);
  ASSERT_EQ(first->WaitForExit(absl::Seconds(30)), 0);

  std::ofstream(state + "/broken.session") << "\x0a\x64zz";
  const std::string log = dir.path() + "/second.log";
  std::unique_ptr<Process> second = Process::Start(command, log);
  ASSERT_TRUE(ClientOf(socket)->WaitForReady().ok()) << ReadFile(log);
  absl::StatusOr<v1::ListSessionsResponse> list =
      ClientOf(socket)->ListSessions();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->sessions_size(), 2);
  EXPECT_EQ(list->sessions(0).name(), "a");
  EXPECT_EQ(list->sessions(1).name(), "default");
  EXPECT_THAT(ReadFile(log),
              HasSubstr("schedcached: skipping stored session " + state +
                        "/broken.session: DATA_LOSS: " + state +
                        "/broken.session: not a "
                        "schedcache.v1.CreateSessionRequest (4 bytes)"));
  EXPECT_THAT(ReadFile(log), HasSubstr("schedcached: restored session \"a\" "
                                       "from " + state + "/a.session"));
  second->Signal(SIGTERM);
  EXPECT_EQ(second->WaitForExit(absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace schedcache::test_support
