// The remote AbSession: a session on a schedcached server (`schedcache ab
// --server ADDR`). It creates a session of its own (named "ab-PID-NANOS"),
// ingests the events in batches on one stream, watches its preference
// changes (WatchPreferences), reads the report, and deletes the session.
//
// The server does not report single scans: reports_scans() is false, so
// --scan-trace and the exact histograms are not available this way.
// Preference changes are collected by a reader thread while events flow and
// handed to the observer in Finish, on the calling thread, in the order the
// server sent them. Events the server refuses are reported from Finish
// (SessionOutcome::first_deferred, by stream position), not as errors.
//
// Thread contract: thread-compatible; owns one reader thread between
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
// changes to `observer` (not owned; must outlive the session). Returns the
// server's errors (Unavailable when it cannot be reached, InvalidArgument
// for unknown policies or tunables, naming them).
absl::StatusOr<std::unique_ptr<AbSession>> MakeRemoteSession(
    const std::string& address, const client::SessionSpec& config,
    AbObserver& observer);

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_REMOTE_SESSION_H_
