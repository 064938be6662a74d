#include "bench/server_process.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/rpc_probe.h"

namespace schedcache {

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::string& binary, const std::vector<std::string>& args,
    absl::Duration timeout) {
  char dir_template[] = "/tmp/schedcache-bench-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    return absl::InternalError(
        absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  const std::string dir = dir_template;
  const std::string address = absl::StrCat("unix:", dir, "/schedcached.sock");
  std::vector<std::string> argv_strings = {binary,
                                           absl::StrCat("--listen=", address)};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  const absl::Time forked = absl::Now();
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  std::unique_ptr<ServerProcess> server(new ServerProcess(pid, dir, address));
  RpcProbe probe(RpcProbe::MakeChannel(address));
  const absl::Time give_up = forked + timeout;
  while (absl::Now() < give_up) {
    absl::StatusOr<bool> serving =
        probe.HealthServing(give_up - absl::Now(), /*wait_for_ready=*/true);
    if (serving.ok() && *serving) {
      server->ready_after_ = absl::Now() - forked;
      return server;
    }
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      server->pid_ = -1;
      return absl::InternalError(
          absl::StrCat(binary, " exited before serving"));
    }
  }
  return absl::DeadlineExceededError(absl::StrCat(
      binary, " did not answer a health check within ",
      absl::FormatDuration(timeout)));
}

ServerProcess::~ServerProcess() {
  Stop().IgnoreError();
  const std::string socket = absl::StrCat(dir_, "/schedcached.sock");
  unlink(socket.c_str());
  rmdir(dir_.c_str());
}

absl::StatusOr<int64_t> ServerProcess::RssBytes() const {
  std::ifstream status(absl::StrCat("/proc/", pid_, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "VmRSS:")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, " kB");
    int64_t kib;
    if (!absl::SimpleAtoi(rest, &kib)) break;
    return kib * 1024;
  }
  return absl::InternalError(
      absl::StrCat("no VmRSS in /proc/", pid_, "/status"));
}

absl::StatusOr<absl::Duration> ServerProcess::CpuTime() const {
  const std::string path = absl::StrCat("/proc/", pid_, "/stat");
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  // The command name, in parentheses, may hold spaces: fields are counted
  // from the last ')'. After it come state (field 3) ... utime (14) and
  // stime (15).
  const size_t name_end = line.rfind(')');
  if (name_end == std::string::npos) {
    return absl::InternalError(absl::StrCat("cannot read ", path));
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(line).substr(name_end + 1), ' ', absl::SkipEmpty());
  constexpr size_t kUtime = 14 - 3;  // index among the fields after ')'
  int64_t utime = 0;
  int64_t stime = 0;
  if (fields.size() <= kUtime + 1 ||
      !absl::SimpleAtoi(fields[kUtime], &utime) ||
      !absl::SimpleAtoi(fields[kUtime + 1], &stime)) {
    return absl::InternalError(
        absl::StrCat("no utime and stime in ", path, ": \"", line, "\""));
  }
  const int64_t ticks_per_second = sysconf(_SC_CLK_TCK);
  return absl::Seconds(static_cast<double>(utime + stime) /
                       static_cast<double>(ticks_per_second));
}

absl::Status ServerProcess::Stop() {
  if (pid_ <= 0) return absl::OkStatus();
  kill(pid_, SIGTERM);
  int status = 0;
  const pid_t reaped = waitpid(pid_, &status, 0);
  pid_ = -1;
  if (reaped < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("schedcached ended with status ",
                                            status));
  }
  return absl::OkStatus();
}

}  // namespace schedcache
