#include "eval/workload/workload.h"

#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace schedcache {
namespace {

constexpr int32_t kRedisServerTgid = 1000;
constexpr int32_t kRedisClientTgid = 2000;
constexpr int32_t kHackbenchTgid = 3000;
constexpr int kMaxThreads = kMaxWorkloadThreads;

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo,
                        int64_t hi) {
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload option ", field, " is ", value, "; want ", lo, "..", hi));
  }
  return absl::OkStatus();
}

absl::Status CheckBurst(absl::string_view field, int64_t min, int64_t max) {
  RETURN_IF_ERROR(CheckRange(absl::StrCat(field, "_min_ns"), min, 1,
                             int64_t{1} << 40));
  return CheckRange(absl::StrCat(field, "_max_ns"), max, min,
                    int64_t{1} << 40);
}

// RedisBehavior: request/response ping-pong between benchmark client threads
// and server threads.
class RedisBehavior : public Behavior {
 public:
  RedisBehavior(Simulator& sim, DeterministicRandom& random,
                const WorkloadOptions& options)
      : random_(random), options_(options) {
    for (int i = 0; i < options.server_threads; ++i) {
      const std::string comm =
          i == 0 ? "redis-server" : absl::StrCat("io_thd_", i);
      servers_.push_back(sim.AddThread(kRedisServerTgid, kRedisServerTgid + i,
                                       comm));
    }
    for (int i = 0; i < options.client_threads; ++i) {
      clients_.push_back(sim.AddThread(kRedisClientTgid, kRedisClientTgid + i,
                                       "redis-benchmark"));
    }
    inbox_.resize(servers_.size());
  }

  absl::Status Start(Simulator& sim) {
    for (int client : clients_) {
      RETURN_IF_ERROR(sim.Wake(client, -1, ClientBurst()));
    }
    return absl::OkStatus();
  }

  absl::Status OnBurstEnd(Simulator& sim, int thread) override {
    if (thread >= clients_.front()) {  // a client sent its request
      const size_t server = (thread - clients_.front()) % servers_.size();
      inbox_[server].push_back(thread);
      RETURN_IF_ERROR(sim.Wake(servers_[server], thread, ServerBurst()));
      return sim.Block(thread);
    }
    // A server answered the oldest request it holds.
    std::deque<int>& inbox = inbox_[thread - servers_.front()];
    const int client = inbox.front();
    inbox.pop_front();
    RETURN_IF_ERROR(sim.Wake(client, thread, ClientBurst()));
    if (!inbox.empty()) return sim.Continue(thread, ServerBurst());
    return sim.Block(thread);
  }

 private:
  int64_t ClientBurst() {
    return random_.UniformInt(options_.client_burst_min_ns,
                              options_.client_burst_max_ns);
  }
  int64_t ServerBurst() {
    return random_.UniformInt(options_.server_burst_min_ns,
                              options_.server_burst_max_ns);
  }

  DeterministicRandom& random_;
  const WorkloadOptions& options_;
  std::vector<int> servers_;  // thread indexes, contiguous, before clients
  std::vector<int> clients_;
  std::vector<std::deque<int>> inbox_;  // per server: clients waiting
};

// HackbenchBehavior: groups of senders and receivers passing messages.
class HackbenchBehavior : public Behavior {
 public:
  HackbenchBehavior(Simulator& sim, DeterministicRandom& random,
                    const WorkloadOptions& options)
      : random_(random), options_(options) {
    int32_t tid = kHackbenchTgid;
    first_ = sim.AddThread(kHackbenchTgid, tid++, "hackbench");  // main
    ++first_;
    const int workers = 2 * options.groups * options.fds;
    role_.resize(workers);
    for (int i = 0; i < workers; ++i) {
      sim.AddThread(kHackbenchTgid, tid++, "hackbench");
      // Worker i: group i / (2 * fds); the first fds of a group send.
      role_[i].group = i / (2 * options.fds);
      role_[i].sender = i % (2 * options.fds) < options.fds;
    }
  }

  absl::Status Start(Simulator& sim) {
    for (size_t i = 0; i < role_.size(); ++i) {
      if (role_[i].sender) {
        RETURN_IF_ERROR(sim.Wake(first_ + i, -1, MessageBurst()));
      }
    }
    return absl::OkStatus();
  }

  absl::Status OnBurstEnd(Simulator& sim, int thread) override {
    Role& me = role_[thread - first_];
    if (me.sender) {
      const int receiver = first_ + me.group * 2 * options_.fds +
                           options_.fds + me.next_receiver;
      me.next_receiver = (me.next_receiver + 1) % options_.fds;
      Role& r = role_[receiver - first_];
      ++r.pending;
      RETURN_IF_ERROR(sim.Wake(receiver, thread, MessageBurst()));
      if (r.pending >= options_.socket_window) {
        r.waiters.push_back(thread);  // the socket is full
        return sim.Block(thread);
      }
      return sim.Continue(thread, MessageBurst());
    }
    --me.pending;  // read one message
    if (me.pending <= options_.socket_window / 2 && !me.waiters.empty()) {
      for (int sender : me.waiters) {
        RETURN_IF_ERROR(sim.Wake(sender, thread, MessageBurst()));
      }
      me.waiters.clear();
    }
    if (me.pending > 0) return sim.Continue(thread, MessageBurst());
    return sim.Block(thread);
  }

 private:
  struct Role {
    int group = 0;
    bool sender = false;
    int next_receiver = 0;     // sender: index within the group's receivers
    int pending = 0;           // receiver: unread messages
    std::vector<int> waiters;  // receiver: senders blocked on it
  };

  int64_t MessageBurst() {
    return random_.UniformInt(options_.message_burst_min_ns,
                              options_.message_burst_max_ns);
  }

  DeterministicRandom& random_;
  const WorkloadOptions& options_;
  int first_ = 0;  // thread index of the first worker
  std::vector<Role> role_;
};

// NumaNodeSink stamps every Sample with its process's preferred NUMA node:
// the node of the first CPU the process ran on.
class NumaNodeSink : public EventSink {
 public:
  NumaNodeSink(const Topology& topology, EventSink& next)
      : topology_(topology), next_(next) {}

  absl::Status OnSample(const Sample& sample) override {
    auto [it, inserted] = node_of_.try_emplace(sample.tgid, 0);
    if (inserted) it->second = topology_.NodeOf(sample.cpu);
    Sample stamped = sample;
    stamped.numa_node = it->second;
    return next_.OnSample(stamped);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return next_.OnHandOver(hand_over);
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    node_of_.erase(exit.tgid);  // a later process of that tgid is new
    return next_.OnProcessExit(exit);
  }

 private:
  const Topology& topology_;
  EventSink& next_;
  absl::flat_hash_map<int32_t, int32_t> node_of_;  // tgid -> node
};

}  // namespace

absl::StatusOr<WorkloadKind> ParseWorkloadKind(absl::string_view name) {
  if (name == "redis") return WorkloadKind::kRedis;
  if (name == "hackbench") return WorkloadKind::kHackbench;
  return absl::InvalidArgumentError(absl::StrCat(
      "workload '", name, "' is not one of: redis, hackbench"));
}

absl::Status ValidateWorkloadOptions(const WorkloadOptions& o) {
  RETURN_IF_ERROR(CheckRange("duration_ns", o.duration_ns, 1, INT64_MAX / 2));
  RETURN_IF_ERROR(CheckRange("start_ns", o.start_ns, 0, INT64_MAX / 2));
  RETURN_IF_ERROR(CheckRange("hz", o.hz, 1, 1'000'000'000));
  RETURN_IF_ERROR(CheckRange("slice_ns", o.slice_ns, 1, INT64_MAX / 2));
  if (!(o.spill_probability >= 0.0 && o.spill_probability <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload option spill_probability is ", o.spill_probability,
        "; want 0..1"));
  }
  if (o.kind == WorkloadKind::kRedis) {
    RETURN_IF_ERROR(CheckRange("server_threads", o.server_threads, 1, kMaxThreads));
    RETURN_IF_ERROR(CheckRange("client_threads", o.client_threads, 1, kMaxThreads));
    RETURN_IF_ERROR(
        CheckBurst("server_burst", o.server_burst_min_ns, o.server_burst_max_ns));
    return CheckBurst("client_burst", o.client_burst_min_ns,
                      o.client_burst_max_ns);
  }
  RETURN_IF_ERROR(CheckRange("groups", o.groups, 1, kMaxThreads));
  RETURN_IF_ERROR(CheckRange("fds", o.fds, 1, kMaxThreads / (2 * o.groups)));
  RETURN_IF_ERROR(CheckRange("socket_window", o.socket_window, 1, 1 << 20));
  return CheckBurst("message_burst", o.message_burst_min_ns,
                    o.message_burst_max_ns);
}

absl::StatusOr<WorkloadStats> RunWorkload(const Topology& topology,
                                          const WorkloadOptions& options,
                                          const PreferredLlcFn& preferred_llc,
                                          EventSink& sink) {
  RETURN_IF_ERROR(ValidateWorkloadOptions(options));
  DeterministicRandom random(options.seed);
  Simulator::Params params;
  params.start_ns = options.start_ns;
  params.end_ns = options.start_ns + options.duration_ns;
  params.slice_ns = options.slice_ns;
  params.spill_probability = options.spill_probability;
  params.hz = options.hz;
  NumaNodeSink numa_sink(topology, sink);
  EventSink& out = options.numa_preferred_node ? numa_sink : sink;
  Simulator sim(topology, params, preferred_llc, random, out);

  WorkloadStats stats;
  if (options.kind == WorkloadKind::kRedis) {
    RedisBehavior behavior(sim, random, options);
    RETURN_IF_ERROR(behavior.Start(sim));
    RETURN_IF_ERROR(sim.Run(behavior));
    stats.processes = {
        {kRedisServerTgid, "redis-server", options.server_threads},
        {kRedisClientTgid, "redis-benchmark", options.client_threads}};
  } else {
    HackbenchBehavior behavior(sim, random, options);
    RETURN_IF_ERROR(behavior.Start(sim));
    RETURN_IF_ERROR(sim.Run(behavior));
    stats.processes = {{kHackbenchTgid, "hackbench",
                        1 + 2 * options.groups * options.fds}};
  }
  const SchedCounters& c = sim.machine().counters();
  stats.samples = c.samples;
  stats.tick_samples = c.tick_samples;
  stats.hand_overs = c.hand_overs;
  stats.placement = sim.counters();
  stats.runtime_ns = sim.machine().runtime_ns();
  return stats;
}

}  // namespace schedcache
