// SessionManager: the named sessions of one server, with the session limit.
//
// A session is built in two steps so that building (seconds, on a worker
// thread; see session_builder.h) happens outside the manager: Reserve claims
// the name and a slot when the request arrives, then Add registers the built
// session, or Release gives the claim back. A reserved name is not a
// session yet: Find, List and Delete do not see it.
//
// With a StateDir (--state_dir), Add stores the definition of each session
// it registers and Delete removes it, so named sessions outlive a restart
// (server.cc restores them at start).
//
// Thread contract: thread-safe. Sessions are handed out as shared_ptr, so a
// request that found a session keeps it alive even if it is deleted
// meanwhile (it then answers NotFound from the closed session).
#ifndef SCHEDCACHE_SERVER_SESSION_MANAGER_H_
#define SCHEDCACHE_SERVER_SESSION_MANAGER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/session.h"
#include "server/state_dir.h"

namespace schedcache {

class SessionManager {
 public:
  // `state_dir` may be null: nothing is stored.
  SessionManager(int max_sessions, std::shared_ptr<const StateDir> state_dir);

  // Reserve claims `name` and one of --max_sessions' slots for a session
  // about to be built, so that the limit and a second creation of one name
  // are decided when the requests arrive. Returns AlreadyExists when a
  // session or a build holds the name, ResourceExhausted at --max_sessions
  // (builds included), Unavailable after CloseAll. Each OK Reserve needs
  // exactly one Add or Release of the name.
  absl::Status Reserve(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);

  // Add registers `session` under the name it reserved, ending the
  // reservation. Given a `definition` (the request that created it) and a
  // StateDir, it stores the definition first; a failed write is returned
  // (Internal, naming the file) and the session is not registered. After
  // CloseAll it returns Unavailable and only ends the reservation.
  // REQUIRES: Reserve(session->name()) returned OK.
  absl::Status Add(std::shared_ptr<Session> session,
                   const v1::CreateSessionRequest* definition = nullptr)
      ABSL_LOCKS_EXCLUDED(state_mu_, mu_);

  // Release ends a reservation whose session will not be added (its build
  // failed, or its creation was cancelled).
  void Release(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // Find returns the session called `name` ("" means "default"), or
  // NotFound naming it.
  absl::StatusOr<std::shared_ptr<Session>> Find(absl::string_view name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // List returns every session in name order.
  std::vector<std::shared_ptr<Session>> List() const ABSL_LOCKS_EXCLUDED(mu_);

  // Delete removes and closes a session, and its stored definition;
  // NotFound when there is none. When the definition cannot be removed
  // (Internal, naming the file) the session stays.
  absl::Status Delete(absl::string_view name)
      ABSL_LOCKS_EXCLUDED(state_mu_, mu_);

  // CloseAll closes every session (ending their watch streams) and refuses
  // new ones: the first step of shutdown.
  void CloseAll() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int max_sessions_;
  const std::shared_ptr<const StateDir> state_dir_;

  // Orders the stored definitions as the sessions themselves: a Delete
  // removes its file before a new session of the name can store its own.
  // Held across file writes, so never by Find or List.
  absl::Mutex state_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> reserved_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SESSION_MANAGER_H_
