// SessionBuilder on an in-process gRPC server whose CreateSession hands
// every call to it, with a topology loader that holds chosen builds until
// the test lets them go. What the end-to-end tests (tests/
// session_build_test.cc) cannot hold still: Stop with one creation
// building and one queued, a creation arriving after Stop, a built session
// the manager refuses, and one worker building in arrival order. Every
// wait is for an event (a build held, a call started or answered), never
// for time.
#include "server/session_builder.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "policies/testing/test_topologies.h"
#include "schedcache/v1/schedcache.grpc.pb.h"

namespace schedcache {
namespace {

using ::testing::ElementsAre;

// kHeld is the topology spec whose builds the gate holds.
constexpr char kHeld[] = "held";

// BuildGate is the builder's topology loader: it logs each build's spec
// in the order builds start, holds builds of kHeld until Release, and
// gives every build the 1 node x 2 LLCs x 4 CPUs grid. Shared by pointer
// with the builder's threads, which may outlive a test.
class BuildGate {
 public:
  static SessionTopologyLoader Loader(std::shared_ptr<BuildGate> gate) {
    return [gate](const v1::TopologySource& source) {
      return gate->Load(source);
    };
  }

  // WaitForHeld blocks until a build of kHeld has started.
  void WaitForHeld() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&held_));
  }
  void Release() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    log_.push_back("release");
    released_ = true;
  }
  std::vector<std::string> log() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return log_;
  }

 private:
  absl::StatusOr<std::shared_ptr<const Topology>> Load(
      const v1::TopologySource& source) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    log_.push_back(source.spec());
    if (source.spec() == kHeld) {
      held_ = true;
      mu_.Await(absl::Condition(&released_));
    }
    return test_support::MakeGrid({1, 2, 4});
  }

  mutable absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

// CreateOnlyService hands each CreateSession to the builder, with a
// full-scan session of the request's name (the settings the service
// validated, in schedcached); every other method is unimplemented. It
// counts the calls handed over, so a test knows a creation is queued.
class CreateOnlyService final : public v1::SchedCache::CallbackService {
 public:
  explicit CreateOnlyService(SessionBuilder& builder) : builder_(builder) {}

  grpc::ServerUnaryReactor* CreateSession(
      grpc::CallbackServerContext* context,
      const v1::CreateSessionRequest* request,
      v1::Session* response) override {
    SessionSettings settings;
    settings.name = request->name();
    settings.policies.push_back(PolicyChoice{"full-scan", {}});
    grpc::ServerUnaryReactor* reactor =
        builder_.Start(*context, std::move(settings), *request, response);
    absl::MutexLock lock(&mu_);
    ++started_;
    return reactor;
  }

  // WaitForStarted blocks until `n` calls were handed to the builder.
  void WaitForStarted(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    awaited_ = n;
    mu_.Await(absl::Condition(this, &CreateOnlyService::EnoughStarted));
  }

 private:
  bool EnoughStarted() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return started_ >= awaited_;
  }

  SessionBuilder& builder_;
  absl::Mutex mu_;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int awaited_ ABSL_GUARDED_BY(mu_) = 0;
};

// Request asks for a session `name` whose topology spec is `spec`.
v1::CreateSessionRequest Request(const std::string& name,
                                 const std::string& spec) {
  v1::CreateSessionRequest request;
  request.set_name(name);
  request.mutable_topology()->set_spec(spec);
  return request;
}

// AsyncCreate is one CreateSession in flight on gRPC's callback API.
class AsyncCreate {
 public:
  AsyncCreate(v1::SchedCache::Stub& stub, v1::CreateSessionRequest request)
      : request_(std::move(request)) {
    stub.async()->CreateSession(&context_, &request_, &response_,
                                [this](grpc::Status status) {
                                  status_ = std::move(status);
                                  answered_.Notify();
                                });
  }
  const grpc::Status& Wait() {
    answered_.WaitForNotification();
    return status_;
  }
  const v1::Session& response() const { return response_; }

 private:
  grpc::ClientContext context_;
  const v1::CreateSessionRequest request_;
  v1::Session response_;
  grpc::Status status_;
  absl::Notification answered_;
};

// SessionBuilderTest runs CreateOnlyService in process over one builder
// with one worker.
class SessionBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PolicyRegistry> registry = BuildPolicyRegistry({});
    ASSERT_TRUE(registry.ok()) << registry.status();
    builder_ = std::make_unique<SessionBuilder>(
        std::make_shared<const PolicyRegistry>(*std::move(registry)),
        sessions_, BuildGate::Loader(gate_), /*watch_history=*/16,
        /*workers=*/1, Clock::Real());
    service_ = std::make_unique<CreateOnlyService>(*builder_);
    grpc::ServerBuilder server;
    server.RegisterService(service_.get());
    server_ = server.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::SchedCache::NewStub(
        server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    gate_->Release();  // no build may stay held past the test
    if (server_ != nullptr) server_->Shutdown();
  }

  const std::shared_ptr<BuildGate> gate_ = std::make_shared<BuildGate>();
  const std::shared_ptr<SessionManager> sessions_ =
      std::make_shared<SessionManager>(/*max_sessions=*/8, nullptr);
  std::unique_ptr<SessionBuilder> builder_;
  std::unique_ptr<CreateOnlyService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::SchedCache::Stub> stub_;
};

TEST_F(SessionBuilderTest, OneWorkerBuildsOneAtATimeInArrivalOrder) {
  AsyncCreate first(*stub_, Request("first", kHeld));
  gate_->WaitForHeld();
  // Each queued before the next is sent, so arrival order is known.
  AsyncCreate second(*stub_, Request("second", "second-spec"));
  service_->WaitForStarted(2);
  AsyncCreate third(*stub_, Request("third", "third-spec"));
  service_->WaitForStarted(3);
  gate_->Release();
  for (AsyncCreate* create : {&first, &second, &third}) {
    const grpc::Status& status = create->Wait();
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  // With one worker, nothing else is built while "first" is held.
  EXPECT_THAT(gate_->log(),
              ElementsAre(kHeld, "release", "second-spec", "third-spec"));
  EXPECT_EQ(second.response().name(), "second");
  ASSERT_EQ(second.response().policies_size(), 1);
  EXPECT_EQ(second.response().policies(0), "full-scan");
  EXPECT_EQ(sessions_->List().size(), 3u);
}

TEST_F(SessionBuilderTest,
       StopAnswersTheBuildingAndTheQueuedAndFreesQueuedNames) {
  AsyncCreate building(*stub_, Request("building", kHeld));
  gate_->WaitForHeld();
  AsyncCreate queued(*stub_, Request("queued", "queued-spec"));
  service_->WaitForStarted(2);

  EXPECT_EQ(builder_->Stop(), 1);  // "building" is still being built
  EXPECT_EQ(builder_->Stop(), 0);  // later calls
  for (AsyncCreate* create : {&building, &queued}) {
    const grpc::Status& status = create->Wait();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(status.error_message(),
              "the server is stopping; the session was not created");
  }
  // The queued creation's name is free at once; the held build keeps its
  // name until it ends (then its session is thrown away).
  EXPECT_TRUE(sessions_->Reserve("queued").ok());
  EXPECT_EQ(sessions_->Reserve("building").code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(gate_->log(), ElementsAre(kHeld));  // "queued" never built
}

TEST_F(SessionBuilderTest, ACreationAfterStopIsAnsweredAtOnceAndFreesItsName) {
  builder_->Stop();
  AsyncCreate late(*stub_, Request("late", "late-spec"));
  const grpc::Status& status = late.Wait();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "the server is stopping");
  EXPECT_TRUE(sessions_->Reserve("late").ok());
  EXPECT_TRUE(gate_->log().empty());
}

TEST_F(SessionBuilderTest, ABuiltSessionTheManagerRefusesIsAnsweredAndDropped) {
  AsyncCreate create(*stub_, Request("refused", kHeld));
  gate_->WaitForHeld();
  // Shutdown's first step comes while the session builds: Add refuses it.
  sessions_->CloseAll();
  gate_->Release();
  const grpc::Status& status = create.Wait();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "the server is stopping");
  EXPECT_TRUE(sessions_->List().empty());
}

}  // namespace
}  // namespace schedcache
