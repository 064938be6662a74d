// ServerProcess: a schedcached child process for the load tool, listening
// on a Unix socket in a fresh temporary directory, with the time from
// fork/exec to its first SERVING health check, and its resident memory.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_BENCH_SERVER_PROCESS_H_
#define SCHEDCACHE_BENCH_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace schedcache {

class ServerProcess {
 public:
  // Start execs `binary` with `args` plus --listen=unix:SOCKET and waits
  // until it answers a health check with SERVING, at most `timeout`.
  // Returns Internal when it cannot start, DeadlineExceeded when it does
  // not serve in time (the child is then stopped).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::string& binary, const std::vector<std::string>& args,
      absl::Duration timeout);
  ~ServerProcess();  // stops the child when still running

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // address is "unix:PATH", for clients.
  const std::string& address() const { return address_; }
  // ready_after is the time from fork to the first SERVING answer.
  absl::Duration ready_after() const { return ready_after_; }
  // RssBytes reads VmRSS from /proc/PID/status.
  absl::StatusOr<int64_t> RssBytes() const;
  // CpuTime is the CPU time the child has used so far, user and system, all
  // its threads (utime + stime of /proc/PID/stat, in clock ticks: 10 ms on
  // Linux, so time runs of seconds).
  absl::StatusOr<absl::Duration> CpuTime() const;
  // Stop sends SIGTERM and reaps the child. Returns Internal when it exits
  // with a failure status.
  absl::Status Stop();

 private:
  ServerProcess(pid_t pid, std::string dir, std::string address)
      : pid_(pid), dir_(std::move(dir)), address_(std::move(address)) {}

  pid_t pid_;
  std::string dir_;
  std::string address_;
  absl::Duration ready_after_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_BENCH_SERVER_PROCESS_H_
