#include "tests/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>

namespace schedcache::test_support {
namespace {

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  return args;
}

std::string ReadFd(int fd) {
  std::string data;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

}  // namespace

std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin:/bin" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string PinnedBusyThreadScript(const std::string& pid_file) {
  // The first CPU this process may run on (taskset then cannot refuse it).
  int cpu = 0;
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &allowed)) ++cpu;
  }
  const std::string pin = "taskset -c " + std::to_string(cpu) + " ";
  return pin + "timeout 0.4 /bin/sh -c 'while :; do :; done' & " + pin +
         "timeout 0.3 /bin/sh -c 'echo $$ > " + pid_file +
         "; while :; do :; done'; wait; exit 0";
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::string& input) {
  CommandResult result;
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
      ::pipe2(err, O_CLOEXEC) != 0) {
    return result;
  }
  std::vector<char*> args = Argv(argv);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  // Feed stdin and drain stderr on threads so no pipe fills up.
  std::thread writer([&] {
    size_t done = 0;
    while (done < input.size()) {
      const ssize_t n = ::write(in[1], input.data() + done, input.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(in[1]);
  });
  std::thread error_reader([&] { result.err = ReadFd(err[0]); });
  result.out = ReadFd(out[0]);
  writer.join();
  error_reader.join();
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::unique_ptr<Process> Process::Start(const std::vector<std::string>& argv,
                                        const std::string& stderr_path) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return nullptr;
  std::vector<char*> args = Argv(argv);
  const pid_t pid = ::fork();
  if (pid < 0) return nullptr;
  if (pid == 0) {
    ::dup2(out[1], 1);
    if (!stderr_path.empty()) {
      const int fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  return std::unique_ptr<Process>(new Process(pid, out[0], pidfd));
}

Process::Process(pid_t pid, int stdout_fd, int pidfd)
    : pid_(pid), stdout_fd_(stdout_fd), pidfd_(pidfd) {}

Process::~Process() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::optional<std::string> Process::ReadLine() {
  while (true) {
    const size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    char chunk[1024];
    const ssize_t n = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (buffer_.empty()) return std::nullopt;
      return std::exchange(buffer_, "");
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string Process::ReadAll() {
  std::string rest = std::exchange(buffer_, "");
  return rest + ReadFd(stdout_fd_);
}

void Process::Signal(int signal) { ::kill(pid_, signal); }

std::optional<int> Process::WaitForExit(absl::Duration timeout) {
  pollfd fd{pidfd_, POLLIN, 0};
  if (::poll(&fd, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) {
    return std::nullopt;
  }
  int status = 0;
  if (::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
  reaped_ = true;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::optional<size_t> Process::WaitForFirstExit(
    const std::vector<Process*>& processes, absl::Duration timeout) {
  std::vector<pollfd> fds;
  for (const Process* process : processes) {
    fds.push_back(pollfd{process->pidfd_, POLLIN, 0});
  }
  if (::poll(fds.data(), fds.size(),
             static_cast<int>(absl::ToInt64Milliseconds(timeout))) <= 0) {
    return std::nullopt;
  }
  for (size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents != 0) return i;
  }
  return std::nullopt;
}

}  // namespace schedcache::test_support
