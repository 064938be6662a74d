// SessionManager: the named sessions of one server, with the session limit.
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
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/session.h"

namespace schedcache {

class SessionManager {
 public:
  // `registry` must outlive the manager.
  SessionManager(const PolicyRegistry& registry, int max_sessions);

  // Create builds and adds a session. Returns AlreadyExists for a taken
  // name, ResourceExhausted at --max_sessions, Unavailable after CloseAll,
  // or the Engine's InvalidArgument.
  absl::StatusOr<std::shared_ptr<Session>> Create(
      SessionSettings settings, std::shared_ptr<const Topology> topology)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Find returns the session called `name` ("" means "default"), or
  // NotFound naming it.
  absl::StatusOr<std::shared_ptr<Session>> Find(absl::string_view name) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // List returns every session in name order.
  std::vector<std::shared_ptr<Session>> List() const ABSL_LOCKS_EXCLUDED(mu_);

  // Delete removes and closes a session; NotFound when there is none.
  absl::Status Delete(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_);

  // CloseAll closes every session (ending their watch streams) and refuses
  // new ones: the first step of shutdown.
  void CloseAll() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const PolicyRegistry& registry_;
  const int max_sessions_;

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions_
      ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SESSION_MANAGER_H_
