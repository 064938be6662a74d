// EngineHarness: a session engine over a test topology with policies built
// by registry name, and short-hands for the calls tests make.
#ifndef SCHEDCACHE_POLICIES_TESTING_ENGINE_HARNESS_H_
#define SCHEDCACHE_POLICIES_TESTING_ENGINE_HARNESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policies/engine.h"
#include "policies/testing/random_streams.h"
#include "policies/testing/test_registry.h"
#include "policies/testing/test_topologies.h"

namespace schedcache::test_support {

// MakeEngine builds an engine with `policies` (by name) from TestRegistry().
absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(
    std::shared_ptr<const Topology> topology,
    const std::vector<std::string>& policies, EngineOptions options = {});

// MustMakeEngine is MakeEngine for a test that needs the engine: a failure
// to build it fails the test and returns nullptr (ASSERT_NE on it).
std::unique_ptr<Engine> MustMakeEngine(
    std::shared_ptr<const Topology> topology, EngineOptions options = {},
    const std::vector<std::string>& policies = {"full-scan", "visited-scan"});

// ScanNow asks every policy for a fresh scan for `tid` of `tgid` at `ts`
// and returns the decisions (empty on error).
std::vector<PolicyDecision> ScanNow(Engine& engine, int32_t tgid, int32_t tid,
                                    int64_t ts);

// Apply feeds one stream event; a scan request returns the decisions,
// other events an empty vector.
absl::StatusOr<std::vector<PolicyDecision>> Apply(Engine& engine,
                                                  const StreamEvent& event);

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_POLICIES_TESTING_ENGINE_HARNESS_H_
