// Pins the generated streams of workload:hackbench and workload:redis to a
// digest, so that work on the generator's speed (docs/PERFORMANCE.md,
// "Performance: workloads, engine, server") provably keeps every event
// byte-identical. The digests are not derivable by hand: they were recorded
// from the generator as it was before that work (commit 0282aad), and a
// change to either is a change of the stream, which must be deliberate
// (docs/EVALUATION.md's figures depend on it) and say so in its commit.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "eval/workload/workload.h"
#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

constexpr int64_t kMs = 1'000'000;

// Fnv1a folds `bytes` into the 64-bit FNV-1a hash `h`.
uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3;
  }
  return h;
}

// StreamDigest hashes every field of every event in order: EventText's
// line, then what it leaves out (a sample's `preempted` and `jiffies`),
// then the run's totals.
uint64_t StreamDigest(const RecordingSink& sink, const WorkloadStats& stats) {
  uint64_t h = 0xcbf29ce484222325;
  for (const RecordingSink::Event& e : sink.events()) {
    std::string line = EventText(e);
    if (const Sample* s = std::get_if<Sample>(&e)) {
      line += (s->preempted ? " preempted" : "") + std::string(" jiffies ") +
              std::to_string(s->jiffies);
    }
    h = Fnv1a(h, line);
    h = Fnv1a(h, "\n");
  }
  h = Fnv1a(h, std::to_string(stats.samples) + " " +
                   std::to_string(stats.tick_samples) + " " +
                   std::to_string(stats.hand_overs) + " " +
                   std::to_string(stats.requests));
  for (const int64_t runtime : stats.runtime_ns) {
    h = Fnv1a(h, " " + std::to_string(runtime));
  }
  return h;
}

struct Digested {
  uint64_t digest = 0;
  size_t events = 0;
};

// Generate runs `options` on bench/run's 384-CPU EPYC 9654 shape with a
// fixed preference per process (LLC tgid mod 24; every third process none),
// so placement through the preference callback is pinned too.
Digested Generate(const WorkloadOptions& options) {
  absl::StatusOr<Topology> topology =
      LoadTopology("synthetic:pack:2 numa:1 l3:12 core:8 pu:2");
  EXPECT_TRUE(topology.ok()) << topology.status();
  if (!topology.ok()) return {};
  RecordingSink sink;
  absl::StatusOr<WorkloadStats> stats = RunWorkload(
      *topology, options,
      [](int32_t tgid) { return tgid % 3 == 0 ? -1 : tgid % 24; }, sink);
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (!stats.ok()) return {};
  return {StreamDigest(sink, *stats), sink.events().size()};
}

TEST(WorkloadDigest, HackbenchStreamIsTheRecordedOne) {
  WorkloadOptions options;
  options.kind = WorkloadKind::kHackbench;
  options.seed = 3;
  options.duration_ns = 40 * kMs;
  const Digested got = Generate(options);
  EXPECT_EQ(got.events, 83997u);
  EXPECT_EQ(got.digest, 8322410115644644268u);
}

TEST(WorkloadDigest, RedisStreamIsTheRecordedOne) {
  WorkloadOptions options;
  options.kind = WorkloadKind::kRedis;
  options.seed = 5;
  options.duration_ns = 40 * kMs;
  options.spill_probability = 0.1;
  const Digested got = Generate(options);
  EXPECT_EQ(got.events, 44573u);
  EXPECT_EQ(got.digest, 9263168749306656336u);
}

}  // namespace
}  // namespace schedcache
