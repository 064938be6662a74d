// The in-process AbSession: an Engine in this process, fed directly. This is
// `schedcache ab` without --server, the demo, and what tests use: no server,
// no copies of the events, and every executed scan is observed.
//
// Thread contract: thread-compatible (as Engine).
#ifndef SCHEDCACHE_EVAL_AB_IN_PROCESS_SESSION_H_
#define SCHEDCACHE_EVAL_AB_IN_PROCESS_SESSION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "eval/ab/ab_session.h"
#include "policies/policy_registry.h"
#include "policies/session_settings.h"
#include "schedcache/session_request.h"
#include "topology/topology.h"

namespace schedcache::ab {

// ResolveSessionSettings resolves `config`'s policies, tunables and trigger
// against `registry` with the server's own rules (policies/
// session_settings.h), building the engine's settings directly, with no
// CreateSessionRequest in between (config.topology is not read). Returns
// InvalidArgument naming a malformed setting or trigger, an unknown policy,
// tunable or value.
absl::StatusOr<SessionSettings> ResolveSessionSettings(
    const client::SessionSpec& config, const PolicyRegistry& registry);

// MakeInProcessSession builds an engine over `topology` as `config` says
// (config.topology is not read: `topology` is that topology, loaded by the
// caller) with the policies of `registry`, reporting to `observer` (not
// owned; must outlive the session). Returns InvalidArgument for unknown
// policies, tunables or values, naming them.
absl::StatusOr<std::unique_ptr<AbSession>> MakeInProcessSession(
    std::shared_ptr<const Topology> topology, const client::SessionSpec& config,
    const PolicyRegistry& registry, AbObserver& observer);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_IN_PROCESS_SESSION_H_
