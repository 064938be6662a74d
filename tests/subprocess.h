// Subprocess helpers of the end-to-end tests: run a built binary and
// capture its output, or start a long-running one (schedcached) and stop it
// with a signal, waiting on its exit with a deadline (pidfd + poll, no
// sleeps).
#ifndef SCHEDCACHE_TESTS_SUBPROCESS_H_
#define SCHEDCACHE_TESTS_SUBPROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace schedcache::test_support {

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// RunCommand runs `argv` (argv[0] a path), with `input` on stdin, and waits.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::string& input = "");

// FindInPath returns the first executable `name` on $PATH (/usr/bin:/bin
// when unset), or nullopt: for tests that skip without a Debian tool.
std::optional<std::string> FindInPath(const std::string& name);

// ReadFile returns the bytes of the file at `path` (what a command wrote);
// empty when it cannot be read.
std::string ReadFile(const std::string& path);

// PinnedBusyThreadScript returns a /bin/sh script for the tests that record
// the real scheduler: its busy thread, an inner sh that writes its pid (also
// its tid) to `pid_file`, spins for 0.3 s on one CPU the test may use, where
// a second spinner runs from before it starts until 0.1 s after it ends.
// Why: Linux 6.18 leaves out of perf most sched_switch events whose prev is
// the idle task (169 of about 5,000 in 26 captures here), and ftrace some
// (in hackbench traces about 1 in 5), and replay accounts no stretch whose
// switch-in it did not see. A busy thread that moves to an idle CPU and
// spins there alone is then never accounted. Sharing its CPU, it comes in
// from the other spinner at every slice, so one lost switch costs one slice;
// and its last switch-out, after its exit, falls while the other still runs
// and tracing is on. Its runtime is about half of the 0.3 s.
std::string PinnedBusyThreadScript(const std::string& pid_file);

// Process is a started child whose stdout is readable line by line.
class Process {
 public:
  // Start forks and execs `argv`; stderr goes to `stderr_path` (or is
  // inherited when empty).
  // Returns nullptr when the fork fails.
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv,
                                        const std::string& stderr_path = "");
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills a child still running

  pid_t pid() const { return pid_; }
  // ReadLine returns the next line of stdout, without '\n'; nullopt at EOF.
  std::optional<std::string> ReadLine();
  // ReadAll returns the rest of stdout.
  std::string ReadAll();
  // Signal sends `signal` to the child.
  void Signal(int signal);
  // WaitForExit waits up to `timeout` and returns the exit code (or -1 when
  // killed by a signal), or nullopt when it is still running.
  std::optional<int> WaitForExit(absl::Duration timeout);
  // WaitForFirstExit waits up to `timeout` until one of `processes` has
  // exited and returns its index (WaitForExit then reaps it), or nullopt.
  static std::optional<size_t> WaitForFirstExit(
      const std::vector<Process*>& processes, absl::Duration timeout);

 private:
  Process(pid_t pid, int stdout_fd, int pidfd);
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_TESTS_SUBPROCESS_H_
