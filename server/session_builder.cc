#include "server/session_builder.h"

#include <algorithm>
#include <deque>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/grpc_status.h"

namespace schedcache {

// Creation is one CreateSession call: what to build, and the reactor that
// answers it. The reactor and the worker share it; Claim hands the answer
// to one of them, once.
class SessionBuilder::Creation {
 public:
  Creation(SessionSettings settings, v1::CreateSessionRequest definition,
           absl::Time deadline, std::shared_ptr<const Clock> clock,
           v1::Session* response)
      : name_(settings.name),
        definition_(std::move(definition)),
        deadline_(deadline),
        clock_(std::move(clock)),
        settings_(std::move(settings)),
        response_(response) {}

  const std::string& name() const { return name_; }
  const v1::TopologySource& source() const { return definition_.topology(); }
  // TakeSettings is for the one worker that builds.
  SessionSettings TakeSettings() { return std::move(settings_); }

  void Attach(grpc::ServerUnaryReactor* reactor) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    reactor_ = reactor;
  }

  // Answer finishes the call with `status` unless it was answered already.
  void Answer(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_) {
    grpc::ServerUnaryReactor* reactor = nullptr;
    {
      absl::MutexLock lock(&mu_);
      reactor = std::exchange(reactor_, nullptr);
    }
    if (reactor != nullptr) reactor->Finish(ToGrpcStatus(status));
  }

  // Wanted tells whether a build is still wanted: false once the call was
  // answered, and false (answering DEADLINE_EXCEEDED) once its deadline
  // has passed.
  bool Wanted() ABSL_LOCKS_EXCLUDED(mu_) {
    if (clock_->Now() >= deadline_) Answer(DeadlineError("before its build"));
    absl::MutexLock lock(&mu_);
    return reactor_ != nullptr;
  }

  // Register adds `session` to `sessions` and answers with its description,
  // unless the call was answered already or its deadline has passed: then
  // the session is dropped. Either way the name's reservation ends. The
  // check and the registration happen under mu_, so a cancellation either
  // comes first (no session) or finds the call answered.
  void Register(std::shared_ptr<Session> session, SessionManager& sessions)
      ABSL_LOCKS_EXCLUDED(mu_) {
    grpc::ServerUnaryReactor* reactor = nullptr;
    absl::Status status;
    {
      absl::MutexLock lock(&mu_);
      if (reactor_ != nullptr && clock_->Now() >= deadline_) {
        status = DeadlineError("once built");
      } else if (reactor_ != nullptr) {
        status = sessions.Add(session, &definition_);
        if (status.ok()) *response_ = session->Describe();
      }
      reactor = std::exchange(reactor_, nullptr);
    }
    if (reactor == nullptr || !status.ok()) sessions.Release(name_);
    if (reactor != nullptr) reactor->Finish(ToGrpcStatus(status));
  }

 private:
  absl::Status DeadlineError(absl::string_view when) const {
    return absl::DeadlineExceededError(
        absl::StrCat("CreateSession of \"", name_, "\" passed its deadline ",
                     when, "; the session was not created"));
  }

  const std::string name_;
  const v1::CreateSessionRequest definition_;
  const absl::Time deadline_;
  const std::shared_ptr<const Clock> clock_;
  SessionSettings settings_;  // moved out by the worker that builds

  absl::Mutex mu_;
  // The call's reactor until the call is answered, then nullptr.
  grpc::ServerUnaryReactor* reactor_ ABSL_GUARDED_BY(mu_) = nullptr;
  // gRPC's response message; written only by whoever claimed the reactor.
  v1::Session* const response_;
};

// Reactor forwards the client's cancellation (or expired deadline) to the
// creation, which gRPC's reactor may not outlive.
class SessionBuilder::Reactor final : public grpc::ServerUnaryReactor {
 public:
  explicit Reactor(std::shared_ptr<Creation> creation)
      : creation_(std::move(creation)) {}
  void OnCancel() override {
    creation_->Answer(absl::CancelledError(absl::StrCat(
        "CreateSession of \"", creation_->name(),
        "\" was cancelled (or passed its deadline); the session was not "
        "created")));
  }
  void OnDone() override { delete this; }

 private:
  const std::shared_ptr<Creation> creation_;
};

// Shared is what the builder and its worker threads share.
struct SessionBuilder::Shared {
  Shared(std::shared_ptr<const PolicyRegistry> registry_in,
         std::shared_ptr<SessionManager> sessions_in,
         SessionTopologyLoader load_topology_in, int watch_history_in,
         std::shared_ptr<const Clock> clock_in)
      : registry(std::move(registry_in)),
        sessions(std::move(sessions_in)),
        load_topology(std::move(load_topology_in)),
        watch_history(watch_history_in),
        clock(std::move(clock_in)) {}

  const std::shared_ptr<const PolicyRegistry> registry;
  const std::shared_ptr<SessionManager> sessions;
  const SessionTopologyLoader load_topology;
  const int watch_history;
  const std::shared_ptr<const Clock> clock;

  absl::Mutex mu;
  absl::CondVar work_or_stop;
  std::deque<std::shared_ptr<Creation>> queued ABSL_GUARDED_BY(mu);
  std::vector<std::shared_ptr<Creation>> building ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
};

SessionBuilder::SessionBuilder(std::shared_ptr<const PolicyRegistry> registry,
                               std::shared_ptr<SessionManager> sessions,
                               SessionTopologyLoader load_topology,
                               int watch_history, int workers,
                               std::shared_ptr<const Clock> clock)
    : shared_(std::make_shared<Shared>(std::move(registry), std::move(sessions),
                                       std::move(load_topology), watch_history,
                                       std::move(clock))) {
  for (int i = 0; i < std::max(workers, 1); ++i) {
    // Detached: a worker still building when the server stops must not make
    // the stop wait (see Stop); it holds `shared_` until it ends.
    std::thread(&SessionBuilder::Work, shared_).detach();
  }
}

SessionBuilder::~SessionBuilder() { Stop(); }

grpc::ServerUnaryReactor* SessionBuilder::Start(
    const grpc::CallbackServerContext& context, SessionSettings settings,
    v1::CreateSessionRequest definition, v1::Session* response) {
  auto creation = std::make_shared<Creation>(
      std::move(settings), std::move(definition),
      absl::FromChrono(context.deadline()), shared_->clock, response);
  auto* reactor = new Reactor(creation);
  creation->Attach(reactor);
  if (absl::Status reserved = shared_->sessions->Reserve(creation->name());
      !reserved.ok()) {
    creation->Answer(reserved);
    return reactor;
  }
  bool stopping = false;
  {
    absl::MutexLock lock(&shared_->mu);
    stopping = shared_->stopping;
    if (!stopping) shared_->queued.push_back(creation);
  }
  if (stopping) {
    shared_->sessions->Release(creation->name());
    creation->Answer(absl::UnavailableError("the server is stopping"));
    return reactor;
  }
  shared_->work_or_stop.Signal();
  return reactor;
}

int SessionBuilder::Stop() {
  std::deque<std::shared_ptr<Creation>> queued;
  std::vector<std::shared_ptr<Creation>> building;
  {
    absl::MutexLock lock(&shared_->mu);
    if (shared_->stopping) return 0;
    shared_->stopping = true;
    queued.swap(shared_->queued);
    building = shared_->building;
  }
  shared_->work_or_stop.SignalAll();
  const absl::Status stopping = absl::UnavailableError(
      "the server is stopping; the session was not created");
  for (const std::shared_ptr<Creation>& creation : queued) {
    shared_->sessions->Release(creation->name());
    creation->Answer(stopping);
  }
  for (const std::shared_ptr<Creation>& creation : building) {
    creation->Answer(stopping);
  }
  return static_cast<int>(building.size());
}

void SessionBuilder::Work(std::shared_ptr<Shared> shared) {
  while (true) {
    std::shared_ptr<Creation> creation;
    {
      absl::MutexLock lock(&shared->mu);
      while (!shared->stopping && shared->queued.empty()) {
        shared->work_or_stop.Wait(&shared->mu);
      }
      if (shared->stopping) return;
      creation = std::move(shared->queued.front());
      shared->queued.pop_front();
      shared->building.push_back(creation);
    }
    Build(*shared, *creation);
    absl::MutexLock lock(&shared->mu);
    std::erase(shared->building, creation);
  }
}

void SessionBuilder::Build(Shared& shared, Creation& creation) {
  // A creation cancelled or expired while it queued costs nothing more.
  if (!creation.Wanted()) {
    shared.sessions->Release(creation.name());
    return;
  }
  absl::StatusOr<std::shared_ptr<Session>> session;
  absl::StatusOr<std::shared_ptr<const Topology>> topology =
      shared.load_topology(creation.source());
  if (topology.ok()) {
    session = Session::Create(creation.TakeSettings(), *std::move(topology),
                              *shared.registry, shared.watch_history);
  } else {
    session = topology.status();
  }
  if (!session.ok()) {
    shared.sessions->Release(creation.name());
    creation.Answer(session.status());
    return;
  }
  creation.Register(*std::move(session), *shared.sessions);
}

}  // namespace schedcache
