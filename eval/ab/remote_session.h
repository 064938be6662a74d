// The remote AbSession: a session on a schedcached server (`schedcache ab
// --server ADDR`). It creates a session of its own (named "ab-PID-NANOS"),
// ingests the events in batches on one stream, watches its preference
// changes (WatchPreferences), reads the report, and deletes the session.
//
// When the observer wants_scans (--scan-trace, --perfetto, --html), it
// also watches the
// session's scans (WatchScans) from before the first event: a reader
// thread collects them and the feeding thread hands them to the observer
// every few thousand events and in Finish, in the order the server ran
// them; reports_scans() is then true. Preference changes are collected by
// another reader thread while events flow and handed to the observer in
// Finish, on the calling thread, in the order the server sent them. Both
// streams end when Finish deletes the session, after everything queued
// before: Finish fails when scans were lost (ResourceExhausted: the server
// dropped some for a slow reader; DataLoss: fewer arrived than the report
// counts). Events the server refuses are reported from Finish
// (SessionOutcome::first_deferred, by stream position), not as errors.
//
// Thread contract: thread-compatible; owns its reader threads between
// creation and Finish (or destruction).
#ifndef SCHEDCACHE_EVAL_AB_REMOTE_SESSION_H_
#define SCHEDCACHE_EVAL_AB_REMOTE_SESSION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "eval/ab/ab_session.h"

namespace schedcache::ab {

// MakeRemoteSession creates the session on the server at `address`
// ("unix:PATH" or "HOST:PORT") as `config` says, reporting preference
// changes (and scans, when it wants_scans) to `observer` (not owned; must
// outlive the session). Returns the server's errors (Unavailable when it
// cannot be reached, InvalidArgument for unknown policies or tunables,
// naming them, Unimplemented from a server without WatchScans).
absl::StatusOr<std::unique_ptr<AbSession>> MakeRemoteSession(
    const std::string& address, const client::SessionSpec& config,
    AbObserver& observer);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_REMOTE_SESSION_H_
