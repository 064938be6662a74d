// Shared fixture of the server integration tests: a real schedcache::Server
// started in-process on a temporary Unix socket or on 127.0.0.1 port 0,
// a client connected to it, and helpers that build events.
#ifndef SCHEDCACHE_TESTS_SERVER_FIXTURE_H_
#define SCHEDCACHE_TESTS_SERVER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "events/event.h"
#include "policies/testing/test_topologies.h"
#include "schedcache/client.h"
#include "server/server.h"

namespace schedcache::test_support {

enum class Transport { kUnix, kTcp };

// TempDir is a directory removed (with its content) when destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// TestServer runs a Server and connects a client to it.
struct TestServer {
  // Start starts a server listening on `transport` with `options` (whose
  // listen addresses are replaced).
  static absl::StatusOr<std::unique_ptr<TestServer>> Start(
      Transport transport, ServerOptions options = {});

  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Server> server;
  std::unique_ptr<client::Client> client;
};

// Two LLCs of two CPUs in one NUMA node: the smallest topology on which
// the cache-aware policies are enabled (enable = auto).
inline constexpr char kTwoLlcTopology[] = "synthetic:pack:1 l3:2 core:2 pu:1";

// TwoLlcSessionRequest creates session `name` on kTwoLlcTopology with
// full-scan (the reference), visited-scan and none.
v1::CreateSessionRequest TwoLlcSessionRequest(const std::string& name);

// PreferLlc0Events makes process `tgid` (2 threads) prefer LLC 0 under the
// cache-aware policies, in a session with default tunables on
// kTwoLlcTopology. Derivation (docs/MODEL.md): the first tick at t0 sets the
// process's epoch to CPU 0's epoch 0 and next_scan = t0; the second tick,
// 20 ms later, is 5 jiffies on (HZ 250) and decays CPU 0 by at least
// ceil(5 / 2) = 3 epochs of 2 jiffies, so mm.epoch 0 < cpu_epoch and the
// tick scans. Only CPU 0 (LLC 0) has
// runtime for the process, so LLC 0's occupancy is > 0 = 2 * the current
// LLC's (none), and pref_cpu becomes 0: the preferred LLC changes -1 -> 0.
// invalid_nr is false: 2 threads, and nr_running_avg 0 < 1 * 2 * 1024.
std::vector<Sample> PreferLlc0Events(int tgid, int64_t t0);

// ScanningProcessesEvents is PreferLlc0Events for `processes` processes
// (tgid 100 + 10 k, thread tgid + 1) at once: every first tick at t0, then
// every second tick at t0 + 20 ms (on one CPU, times must not go back), so
// each process scans once per cache-aware policy, as derived above, at its
// second tick: 2 * `processes` scans in a session of TwoLlcSessionRequest.
std::vector<Sample> ScanningProcessesEvents(int processes, int64_t t0);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_TESTS_SERVER_FIXTURE_H_
