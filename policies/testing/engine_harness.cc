#include "policies/testing/engine_harness.h"

#include <utility>

#include "gtest/gtest.h"

namespace schedcache::test_support {

absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(
    std::shared_ptr<const Topology> topology,
    const std::vector<std::string>& policies, EngineOptions options) {
  std::vector<PolicyChoice> choices;
  for (const std::string& name : policies) choices.push_back({name, {}});
  return Engine::Create(std::move(topology), TestRegistry(), std::move(choices),
                        options);
}

std::unique_ptr<Engine> MustMakeEngine(
    std::shared_ptr<const Topology> topology, EngineOptions options,
    const std::vector<std::string>& policies) {
  auto engine = MakeEngine(std::move(topology), policies, options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

std::vector<PolicyDecision> ScanNow(Engine& engine, int32_t tgid, int32_t tid,
                                    int64_t ts) {
  RecommendRequest request;
  request.tgid = tgid;
  request.tid = tid;
  request.scan = true;
  request.timestamp_ns = ts;
  absl::StatusOr<std::vector<PolicyDecision>> decisions =
      engine.Recommend(request);
  if (!decisions.ok()) return {};
  return *std::move(decisions);
}

absl::StatusOr<std::vector<PolicyDecision>> Apply(Engine& engine,
                                                  const StreamEvent& event) {
  if (const Sample* sample = std::get_if<Sample>(&event)) {
    absl::Status status = engine.ApplySample(*sample);
    if (!status.ok()) return status;
    return std::vector<PolicyDecision>{};
  }
  if (const HandOver* handover = std::get_if<HandOver>(&event)) {
    absl::Status status = engine.ApplyHandOver(*handover);
    if (!status.ok()) return status;
    return std::vector<PolicyDecision>{};
  }
  const ScanRequest& scan = std::get<ScanRequest>(event);
  RecommendRequest request;
  request.tgid = scan.tgid;
  request.tid = scan.tid;
  request.scan = true;
  request.timestamp_ns = scan.timestamp_ns;
  return engine.Recommend(request);
}

}  // namespace schedcache::test_support
