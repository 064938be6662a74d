#include "server/session_manager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/message_text.h"
#include "common/service_defaults.h"

namespace schedcache {
namespace {

absl::Status SessionNotFound(absl::string_view name) {
  return absl::NotFoundError(
      absl::StrCat("session ", QuoteForMessage(name), " not found"));
}

}  // namespace

SessionManager::SessionManager(int max_sessions,
                               std::shared_ptr<const StateDir> state_dir)
    : max_sessions_(max_sessions), state_dir_(std::move(state_dir)) {}

absl::Status SessionManager::Reserve(const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("the server is stopping");
  if (sessions_.contains(name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("session ", QuoteForMessage(name), " already exists"));
  }
  if (reserved_.contains(name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("session ", QuoteForMessage(name),
                     " is being created by an earlier CreateSession"));
  }
  const size_t taken = sessions_.size() + reserved_.size();
  if (taken >= static_cast<size_t>(max_sessions_)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("session limit reached: ", taken, " sessions (",
                     reserved_.size(), " of them being created); the limit is ",
                     max_sessions_, " (flag --max_sessions)"));
  }
  reserved_.insert(name);
  return absl::OkStatus();
}

absl::Status SessionManager::Add(std::shared_ptr<Session> session,
                                 const v1::CreateSessionRequest* definition) {
  const std::string name = session->name();
  absl::MutexLock state_lock(&state_mu_);
  const bool store = state_dir_ != nullptr && definition != nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      reserved_.erase(name);
      return absl::UnavailableError("the server is stopping");
    }
  }
  absl::Status stored = store ? state_dir_->Save(*definition) : absl::OkStatus();
  absl::MutexLock lock(&mu_);
  reserved_.erase(name);
  if (stored.ok() && closed_) {
    // CloseAll came while the file was written: the session is not
    // created, so it must not come back at the next start either.
    if (store) state_dir_->Remove(name).IgnoreError();
    stored = absl::UnavailableError("the server is stopping");
  }
  if (!stored.ok()) return stored;
  sessions_.emplace(name, std::move(session));
  return absl::OkStatus();
}

void SessionManager::Release(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  reserved_.erase(name);
}

absl::StatusOr<std::shared_ptr<Session>> SessionManager::Find(
    absl::string_view name) const {
  if (name.empty()) name = kDefaultSessionName;
  absl::MutexLock lock(&mu_);
  const auto it = sessions_.find(name);
  if (it == sessions_.end()) return SessionNotFound(name);
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
    absl::MutexLock state_lock(&state_mu_);
    {
      absl::MutexLock lock(&mu_);
      if (!sessions_.contains(name)) return SessionNotFound(name);
    }
    if (state_dir_ != nullptr) {
      if (absl::Status removed = state_dir_->Remove(name); !removed.ok()) {
        return removed;
      }
    }
    // Another Delete waits for state_mu_, so only CloseAll (the server
    // stopping, which closed the session) can have taken it meanwhile.
    absl::MutexLock lock(&mu_);
    const auto it = sessions_.find(name);
    if (it == sessions_.end()) return absl::OkStatus();
    session = std::move(it->second);
    sessions_.erase(it);
  }
  // Ends its watch streams: no lock may be held. The name is valid (a
  // session has it), so it is quoted whole.
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
    session->Close(absl::UnavailableError("server stopping"));
  }
}

}  // namespace schedcache
