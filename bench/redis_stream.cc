#include "bench/redis_stream.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

// FeedbackSink records every event and applies it to a reference engine,
// whose preferred LLCs the generator's placement reads back.
class FeedbackSink : public EventSink {
 public:
  explicit FeedbackSink(Engine& engine) : engine_(engine) {
    engine_.SetChangeListener([this](const PreferenceChange& change) {
      preferred_llc_[change.tgid] = change.new_llc;
    });
  }

  absl::Status OnSample(const Sample& sample) override {
    RETURN_IF_ERROR(engine_.ApplySample(sample));
    recording_.OnSample(sample).IgnoreError();
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    RETURN_IF_ERROR(engine_.ApplyHandOver(hand_over));
    recording_.OnHandOver(hand_over).IgnoreError();
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    RETURN_IF_ERROR(engine_.ApplyProcessExit(exit));
    recording_.OnProcessExit(exit).IgnoreError();
    return absl::OkStatus();
  }

  int PreferredLlc(int32_t tgid) const {
    auto it = preferred_llc_.find(tgid);
    return it == preferred_llc_.end() ? -1 : it->second;
  }
  const RecordingSink& recording() const { return recording_; }

 private:
  Engine& engine_;
  RecordingSink recording_;
  absl::flat_hash_map<int32_t, int> preferred_llc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(
    std::shared_ptr<const Topology> topology, const PolicyRegistry& registry,
    const std::vector<std::string>& policies, ScanTrigger trigger) {
  std::vector<PolicyChoice> choices;
  for (const std::string& name : policies) choices.push_back({name, {}});
  EngineOptions options;
  options.trigger = trigger;
  return Engine::Create(std::move(topology), registry, std::move(choices),
                        options);
}

WorkloadOptions RedisOptions(int64_t duration_ns) {
  WorkloadOptions options;
  options.kind = WorkloadKind::kRedis;
  options.duration_ns = duration_ns;
  // 18 threads on a 16-CPU LLC: the server visits the whole LLC.
  options.server_threads = 6;
  options.client_threads = 12;
  return options;
}

absl::StatusOr<RecordedStream> RecordStream(absl::string_view source,
                                            const WorkloadOptions& options) {
  ASSIGN_OR_RETURN(Topology topology, LoadTopology(source));
  RecordedStream stream;
  stream.topology = std::make_shared<const Topology>(std::move(topology));
  ASSIGN_OR_RETURN(const PolicyRegistry registry, BuildPolicyRegistry({}));
  ASSIGN_OR_RETURN(std::unique_ptr<Engine> reference,
                   MakeEngine(stream.topology, registry, {"full-scan"},
                              ScanTrigger::kTick));
  FeedbackSink sink(*reference);
  ASSIGN_OR_RETURN(
      WorkloadStats stats,
      RunWorkload(*stream.topology, options,
                  [&sink](int32_t tgid) { return sink.PreferredLlc(tgid); },
                  sink));
  stream.events = sink.recording().events();
  stream.samples = stats.samples;
  stream.hand_overs = stats.hand_overs;
  if (!stream.events.empty()) {
    stream.first_timestamp_ns = TimestampOf(stream.events.front());
    stream.last_timestamp_ns = TimestampOf(stream.events.back());
  }
  return stream;
}

absl::Status ReplayStream(const RecordedStream& stream, int64_t offset_ns,
                          Engine& engine) {
  absl::Status first_error;
  auto keep_first = [&first_error](size_t, const absl::Status& error) {
    first_error.Update(error);
  };
  if (offset_ns == 0) {
    // In place: copying every event was a measurable part of the engine
    // benchmark's time.
    engine.ApplyBatch(stream.events, keep_first);
    return first_error;
  }
  std::vector<Event> shifted;
  shifted.reserve(stream.events.size());
  for (const Event& event : stream.events) {
    shifted.push_back(std::visit(
        [offset_ns](auto e) -> Event {
          e.timestamp_ns += offset_ns;
          return e;
        },
        event));
  }
  engine.ApplyBatch(shifted, keep_first);
  return first_error;
}

}  // namespace schedcache
