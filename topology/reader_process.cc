#include "topology/reader_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace schedcache::reader_process {
namespace {

// kMarker=SERVICE in the environment makes a copy of this program a reader
// process for SERVICE.
constexpr absl::string_view kMarker = "SCHEDCACHE_READER_PROCESS";

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif
#else
constexpr bool kSanitizerBuild = false;
#endif

constexpr rlim_t kReaderAddressSpace = rlim_t{4} << 30;

absl::Status OsError(absl::string_view what) {
  return absl::InternalError(
      absl::StrCat("reader process: ", what, " (", std::strerror(errno), ")"));
}

// Fd closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// MillisLeft is the poll timeout until `deadline`, at least 0, rounded up:
// truncated, poll would return up to 1 ms before the deadline.
int MillisLeft(absl::Time deadline) {
  const int64_t ms = absl::ToInt64Milliseconds(
      absl::Ceil(deadline - absl::Now(), absl::Milliseconds(1)));
  return ms <= 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, INT32_MAX));
}

// WaitFor waits until `fd` is ready for `events` or the deadline passes;
// false on timeout.
bool WaitFor(int fd, short events, absl::Time deadline) {
  pollfd ready{fd, events, 0};
  while (true) {
    const int n = poll(&ready, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // let the read or write report it
  }
}

// Exchange sends `request` on `fd`, closes the sending side and reads the
// answer up to end of file. A reader that dies stops the exchange early: the
// exit status tells why. False when the deadline passed.
bool Exchange(int fd, absl::string_view request, absl::Time deadline,
              std::string* answer) {
  size_t sent = 0;
  while (sent < request.size()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return false;
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (errno != EINTR && errno != EAGAIN) {
      break;  // the reader is gone (EPIPE)
    }
  }
  shutdown(fd, SHUT_WR);
  char buffer[1 << 16];
  while (true) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      answer->append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      return true;
    }
  }
}

// ReaderEnvironment is this process's environment and the marker. In a
// sanitizer build, sanitizer reports of the reader go to its stderr
// (/dev/null) rather than to a log_path CI collects: a reader exists to
// take the crashes of a library that is not ours, and it fails (Call says
// "exited with status 1") either way. The code of ours it runs, the
// conversion of hwloc's topology, also runs in-process for the host and
// synthetic sources, where reports count.
std::vector<std::string> ReaderEnvironment(absl::string_view service) {
  std::vector<std::string> variables;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    variables.emplace_back(*variable);
    if (kSanitizerBuild &&
        (absl::StartsWith(variables.back(), "ASAN_OPTIONS=") ||
         absl::StartsWith(variables.back(), "UBSAN_OPTIONS="))) {
      variables.back() += ":log_path=stderr";
    }
  }
  variables.push_back(absl::StrCat(kMarker, "=", service));
  return variables;
}

// Spawn starts this program as a reader process with `fd` as its stdin and
// stdout.
absl::StatusOr<pid_t> Spawn(absl::string_view service, int fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  // A server blocks its termination signals for sigwait; the reader starts
  // with none blocked and every signal at its default action.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> variables = ReaderEnvironment(service);
  std::vector<char*> environment;
  for (std::string& variable : variables)
    environment.push_back(variable.data());
  environment.push_back(nullptr);
  char name[] = "schedcache-reader";
  char* argv[] = {name, nullptr};
  pid_t pid = -1;
  const int error = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes,
                                argv, environment.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    errno = error;
    return OsError("cannot start /proc/self/exe");
  }
  return pid;
}

// Outcome turns the reader's exit status into Call's result.
absl::StatusOr<std::string> Outcome(int status, std::string answer) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return absl::AbortedError(
        absl::StrCat("the reader process was killed by signal ", signal, " (",
                     strsignal(signal), ")"));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return absl::AbortedError(absl::StrCat(
        "the reader process exited with status ", WEXITSTATUS(status)));
  }
  return answer;
}

bool ReadAll(int fd, std::string* bytes) {
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      bytes->append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> Call(absl::string_view service,
                                 absl::string_view request,
                                 absl::Duration timeout) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return OsError("socketpair");
  }
  Fd mine(pair[0]);
  Fd theirs(pair[1]);
  absl::StatusOr<pid_t> pid = Spawn(service, theirs.get());
  if (!pid.ok()) return pid.status();
  theirs.Close();
  std::string answer;
  const bool answered =
      Exchange(mine.get(), request, absl::Now() + timeout, &answer);
  if (!answered) kill(*pid, SIGKILL);
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0) {
    // ECHILD: SIGCHLD is ignored and the kernel reaped it; the answer alone
    // says whether it finished.
    if (errno != EINTR) {
      status = 0;
      break;
    }
  }
  if (!answered) {
    return absl::DeadlineExceededError(
        absl::StrCat("the reader process did not answer within ",
                     absl::FormatDuration(timeout), " and was killed"));
  }
  return Outcome(status, std::move(answer));
}

void ServeIfReaderProcess(
    absl::string_view service,
    absl::FunctionRef<std::string(absl::string_view request)> serve) {
  const char* marker = std::getenv(std::string(kMarker).c_str());
  if (marker == nullptr || marker != service) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  close_range(STDERR_FILENO + 1, ~0U, 0);
  if (!kSanitizerBuild) {
    const rlimit limit{kReaderAddressSpace, kReaderAddressSpace};
    setrlimit(RLIMIT_AS, &limit);
  }
  std::string request;
  if (!ReadAll(STDIN_FILENO, &request)) _exit(2);
  _exit(WriteAll(STDOUT_FILENO, serve(request)) ? 0 : 3);
}

}  // namespace schedcache::reader_process
