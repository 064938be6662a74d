// A session's engine settings, resolved and checked: which policies it
// runs, their tunables and the model's, and what triggers a scan. The
// server reaches them from a CreateSessionRequest (api/session_config.h),
// eval's in-process sessions straight from their options; both resolve
// names here, so a tunable means the same in either. No protobuf.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_POLICIES_SESSION_SETTINGS_H_
#define SCHEDCACHE_POLICIES_SESSION_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policies/engine.h"
#include "policies/policy_registry.h"

namespace schedcache {

// SessionSettings is what a session was created with, for GetSession.
struct SessionSettings {
  std::string name;
  std::vector<PolicyChoice> policies;
  EngineOptions options;
};

// TunableSetting is one NAME=VALUE as a client wrote it: NAME is a model
// tunable, a tunable of every policy that declares it, or POLICY.NAME for
// one policy; VALUE is a number, true/false or one of the tunable's named
// values.
struct TunableSetting {
  std::string name;
  std::string value;
};

// SessionChoices is a session's configuration as a client chose it, names
// not yet resolved.
struct SessionChoices {
  std::vector<std::string> policies;  // the first is the reference
  std::vector<TunableSetting> tunables;
  ScanTrigger trigger = ScanTrigger::kTick;
};

// ResolveSessionChoices checks `choices.policies` (at least one, each
// known to `registry`, none twice) and resolves each of `choices.tunables`
// in order. `name` is kept as given (the caller checks it);
// `max_processes` bounds the engine's process table. Returns
// InvalidArgument naming the field ("policies: ..." or "tunables: ...") and
// the value: an unknown or repeated policy, an unknown tunable, or a value
// that does not parse or lies outside its range.
absl::StatusOr<SessionSettings> ResolveSessionChoices(
    std::string name, const SessionChoices& choices,
    const PolicyRegistry& registry, int64_t max_processes);

}  // namespace schedcache

#endif  // SCHEDCACHE_POLICIES_SESSION_SETTINGS_H_
