#include "policies/testing/random_streams.h"

#include <algorithm>
#include <random>

namespace schedcache::test_support {
namespace {

struct Process {
  int32_t tgid;
  int threads;
  std::vector<int> cpus;  // home CPUs (revisit mode)
  int sleep_steps = 0;
};

}  // namespace

std::vector<StreamEvent> RandomStream(const Topology& topology,
                                      const StreamShape& shape) {
  std::mt19937_64 rng(shape.seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const std::vector<int> online = topology.online_cpus().ToVector();
  const int nodes = static_cast<int>(topology.numa_nodes().size());
  std::vector<Process> processes;
  for (int p = 0; p < shape.processes; ++p) {
    Process process{100 + p, static_cast<int>(uniform(1, 6)), {}};
    const int home = static_cast<int>(uniform(1, 8));
    for (int i = 0; i < home; ++i) {
      process.cpus.push_back(online[uniform(0, online.size() - 1)]);
    }
    std::sort(process.cpus.begin(), process.cpus.end());
    process.cpus.erase(std::unique(process.cpus.begin(), process.cpus.end()),
                       process.cpus.end());
    processes.push_back(std::move(process));
  }
  std::vector<StreamEvent> events;
  const int64_t quarter = shape.epoch_ns / 4;
  for (int step = 0; step < shape.steps; ++step) {
    int64_t ts = step * quarter;
    for (Process& process : processes) {
      std::vector<int> cpus = process.cpus;
      if (!shape.revisit) {
        if (process.sleep_steps > 0) {
          --process.sleep_steps;
          continue;
        }
        if (uniform(0, 20) == 0) process.sleep_steps = uniform(1, 40);
        cpus.clear();
        const int n = static_cast<int>(uniform(1, 4));
        for (int i = 0; i < n; ++i) {
          cpus.push_back(online[uniform(0, online.size() - 1)]);
        }
      }
      for (int cpu : cpus) {
        ts += uniform(0, 1000);
        const int32_t tid = process.tgid * 100 + static_cast<int32_t>(uniform(1, process.threads));
        if (shape.hand_overs && uniform(0, 3) == 0) {
          events.push_back(HandOver{ts, cpu, process.tgid, tid});
        }
        Sample s;
        s.timestamp_ns = ts;
        s.cpu = cpu;
        s.tgid = process.tgid;
        s.tid = tid;
        s.delta_ns = uniform(1, quarter);
        s.tick = uniform(0, 4) != 0;
        s.nr_threads = process.threads;
        if (shape.numa_nodes) s.numa_node = static_cast<int32_t>(uniform(-1, nodes - 1));
        events.push_back(s);
        if (shape.hand_overs && uniform(0, 5) == 0) {
          events.push_back(HandOver{ts, cpu, 0, 0});
        }
      }
      if (shape.scan_requests && uniform(0, 3) == 0) {
        events.push_back(ScanRequest{ts, process.tgid, process.tgid * 100 + 1});
      }
    }
  }
  return events;
}

}  // namespace schedcache::test_support
