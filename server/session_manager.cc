#include "server/session_manager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/service_defaults.h"

namespace schedcache {

SessionManager::SessionManager(const PolicyRegistry& registry,
                               int max_sessions)
    : registry_(registry), max_sessions_(max_sessions) {}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Create(
    SessionSettings settings, std::shared_ptr<const Topology> topology) {
  const auto admit = [this](const std::string& name)
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    if (closed_) return absl::UnavailableError("the server is stopping");
    if (sessions_.contains(name)) {
      return absl::AlreadyExistsError(
          absl::StrCat("session \"", name, "\" already exists"));
    }
    if (static_cast<int>(sessions_.size()) >= max_sessions_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "session limit reached: ", max_sessions_,
          " sessions exist (flag --max_sessions)"));
    }
    return absl::OkStatus();
  };
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status status = admit(settings.name); !status.ok()) {
      return status;
    }
  }
  // Building the engine may take a while on a large topology: do it without
  // the lock, then check again.
  const std::string name = settings.name;
  absl::StatusOr<std::shared_ptr<Session>> session =
      Session::Create(std::move(settings), std::move(topology), registry_);
  if (!session.ok()) return session.status();
  absl::MutexLock lock(&mu_);
  if (absl::Status status = admit(name); !status.ok()) return status;
  sessions_.emplace(name, *session);
  return session;
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Find(
    absl::string_view name) const {
  if (name.empty()) name = kDefaultSessionName;
  absl::MutexLock lock(&mu_);
  const auto it = sessions_.find(name);
  if (it == sessions_.end()) {
    return absl::NotFoundError(absl::StrCat("session \"", name, "\" not found"));
  }
  return it->second;
}

std::vector<std::shared_ptr<Session>> SessionManager::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<Session>> sessions;
  sessions.reserve(sessions_.size());
  for (const auto& [name, session] : sessions_) sessions.push_back(session);
  return sessions;
}

absl::Status SessionManager::Delete(absl::string_view name) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    const auto it = sessions_.find(name);
    if (it == sessions_.end()) {
      return absl::NotFoundError(
          absl::StrCat("session \"", name, "\" not found"));
    }
    session = std::move(it->second);
    sessions_.erase(it);
  }
  // Ends its watch streams: no lock may be held.
  session->Close(absl::NotFoundError(
      absl::StrCat("session \"", name, "\" was deleted")));
  return absl::OkStatus();
}

void SessionManager::CloseAll() {
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    sessions.swap(sessions_);
  }
  for (const auto& [name, session] : sessions) {
    session->Close(absl::UnavailableError("the server is stopping"));
  }
}

}  // namespace schedcache
