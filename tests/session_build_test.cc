// CreateSession builds off gRPC's callback threads. A test topology loader
// holds chosen builds back until the test lets them go, and the server reads
// a FakeClock the test moves past a creation's deadline, so every assertion
// is about order and outcome, never about timing: what the server answers
// while a build is held, and what becomes of a creation cancelled, expired
// or stopped while it builds.
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/session_config.h"
#include "common/fake_clock.h"
#include "common/grpc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "tests/server_fixture.h"
#include "topology/topology_source.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;

// kHeldSpec is the synthetic source whose builds the gate holds.
constexpr char kHeldSpec[] = "synthetic:pack:1 l3:2 core:2 pu:2";

// BuildGate is the test's topology loader: builds of kHeldSpec wait until
// Release; every other source loads at once. Shared by pointer with the
// server's builder threads, which may outlive a test's locals.
class BuildGate {
 public:
  // Loader returns the loader to put in ServerOptions.
  static SessionTopologyLoader Loader(std::shared_ptr<BuildGate> gate) {
    return
        [gate](const v1::TopologySource& source) { return gate->Load(source); };
  }

  // WaitForHeld blocks until `n` held builds have started.
  void WaitForHeld(int n) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    awaited_ = n;
    mu_.Await(absl::Condition(this, &BuildGate::EnoughHeld));
  }

  void Release() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }

  // Builds counts the builds started of `spec`.
  int Builds(const std::string& spec) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return builds_[spec];
  }

 private:
  bool EnoughHeld() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return held_ >= awaited_;
  }

  absl::StatusOr<std::shared_ptr<const Topology>> Load(
      const v1::TopologySource& source) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      ++builds_[source.spec()];
      if (source.spec() == kHeldSpec) {
        ++held_;
        mu_.Await(absl::Condition(&released_));
      }
    }
    return LoadSessionTopology(source, nullptr, 16'384);
  }

  absl::Mutex mu_;
  int held_ ABSL_GUARDED_BY(mu_) = 0;
  int awaited_ ABSL_GUARDED_BY(mu_) = 0;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<std::string, int> builds_ ABSL_GUARDED_BY(mu_);
};

v1::CreateSessionRequest Request(const std::string& name,
                                 const std::string& spec) {
  v1::CreateSessionRequest request = TwoLlcSessionRequest(name);
  request.mutable_topology()->set_spec(spec);
  return request;
}

// AsyncCreate runs one CreateSession on its own thread, with `deadline`.
class AsyncCreate {
 public:
  AsyncCreate(const std::string& address, v1::CreateSessionRequest request,
              absl::Duration deadline = absl::Seconds(60)) {
    client::Options options;
    options.address = address;
    options.deadline = deadline;
    client_ = client::Client::Connect(options);
    thread_ = std::thread([this, request = std::move(request)] {
      result_ = client_->CreateSession(request);
      done_.Notify();
    });
  }
  ~AsyncCreate() { thread_.join(); }

  bool done() const { return done_.HasBeenNotified(); }
  const absl::StatusOr<v1::Session>& Wait() {
    done_.WaitForNotification();
    return result_;
  }

 private:
  std::unique_ptr<client::Client> client_;
  absl::StatusOr<v1::Session> result_;
  absl::Notification done_;
  std::thread thread_;
};

class SessionBuildTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(Limits{}); }

  void Start(Limits limits) {
    ServerOptions options;
    options.limits = limits;
    options.session_topology_loader = BuildGate::Loader(gate_);
    options.clock = clock_;
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
  }

  const client::Client& client() const { return *test_->client; }
  const std::string& address() const {
    return test_->server->addresses().front();
  }

  // CreateOnceNameIsFree retries creating `name` on kTwoLlcTopology while an
  // earlier creation still holds the name (its build finishing after it was
  // answered); returns the first other outcome.
  absl::StatusOr<v1::Session> CreateOnceNameIsFree(const std::string& name) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    absl::StatusOr<v1::Session> created;
    do {
      created = client().CreateSession(TwoLlcSessionRequest(name));
    } while (created.status().code() == absl::StatusCode::kAlreadyExists &&
             absl::Now() < deadline);
    return created;
  }

  // PassExpiredDeadline moves the server's clock past the deadline of a
  // creation its client saw expire. The client's deadline is behind now, and
  // the server counts the same timeout from the call's arrival, a transit
  // time later; 5 s of clock cover that transit (long on a loaded CI
  // machine) and gRPC rounding the timeout up on the wire. A creation sent
  // later, with the client's 10 s, stays before its deadline.
  void PassExpiredDeadline() {
    clock_->Advance(absl::Now() + absl::Seconds(5) - clock_->Now());
  }

  std::shared_ptr<BuildGate> gate_ = std::make_shared<BuildGate>();
  // Stands still until PassExpiredDeadline, so no creation's deadline passes
  // in the server's eyes by itself.
  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>(absl::Now());
  std::unique_ptr<TestServer> test_;
};

TEST_F(SessionBuildTest, OtherRpcsAnswerWhileCreationsBuild) {
  // Two builds hold both workers, a third creation waits in the queue: as
  // many slow creations as froze the whole server when handlers built
  // inline (two sessions of pu:12000).
  AsyncCreate slow1(address(), Request("slow1", kHeldSpec));
  AsyncCreate slow2(address(), Request("slow2", kHeldSpec));
  gate_->WaitForHeld(2);
  AsyncCreate slow3(address(), Request("slow3", kHeldSpec));
  // Each of these completes while the creations are still pending.
  absl::StatusOr<v1::ListSessionsResponse> list = client().ListSessions();
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->sessions_size(), 1);  // none of the slow ones yet
  EXPECT_EQ(list->sessions(0).name(), "default");
  EXPECT_TRUE(client().GetTopology().ok());
  EXPECT_TRUE(client().GetTopology("default").ok());
  EXPECT_EQ(client().GetSession("slow1").status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<v1::IngestSummary> ingested = [&] {
    std::unique_ptr<client::IngestWriter> writer =
        client().StartIngest("default");
    EXPECT_TRUE(writer->Add(SampleAt(1000, 0, 10, 11, 100, true)).ok());
    return writer->Finish();
  }();
  ASSERT_TRUE(ingested.ok()) << ingested.status();
  EXPECT_EQ(ingested->accepted(), 1u);
  EXPECT_TRUE(client().GetReport("default").ok());
  EXPECT_FALSE(slow1.done());
  EXPECT_FALSE(slow2.done());
  EXPECT_FALSE(slow3.done());

  gate_->Release();
  for (AsyncCreate* slow : {&slow1, &slow2, &slow3}) {
    const absl::StatusOr<v1::Session>& created = slow->Wait();
    ASSERT_TRUE(created.ok()) << created.status();
    EXPECT_EQ(created->topology_source(), kHeldSpec);
  }
  EXPECT_EQ(client().ListSessions()->sessions_size(), 4);
}

TEST_F(SessionBuildTest, NameAndSlotAreReservedWhileBuilding) {
  Start(Limits{.max_sessions = 3});  // default, "slow", one more
  AsyncCreate slow(address(), Request("slow", kHeldSpec));
  gate_->WaitForHeld(1);
  absl::Status again =
      client().CreateSession(TwoLlcSessionRequest("slow")).status();
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(),
            "session \"slow\" is being created by an earlier CreateSession");
  ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest("third")).ok());
  absl::Status full =
      client().CreateSession(TwoLlcSessionRequest("fourth")).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(full.message(),
            "session limit reached: 3 sessions (1 of them being created); "
            "the limit is 3 (flag --max_sessions)");
  gate_->Release();
  EXPECT_TRUE(slow.Wait().ok()) << slow.Wait().status();
}

TEST_F(SessionBuildTest, ExpiredCreationIsNotRegistered) {
  AsyncCreate slow(address(), Request("late", kHeldSpec),
                   absl::Milliseconds(300));
  gate_->WaitForHeld(1);
  EXPECT_EQ(slow.Wait().status().code(), absl::StatusCode::kDeadlineExceeded);
  // The server's deadline is the client's timeout counted from when the
  // call reached it, a moment after the client's own (long on a loaded CI
  // machine, where the build once finished inside that moment and was
  // registered). Pass the server's deadline before the build may end.
  PassExpiredDeadline();
  gate_->Release();
  // The held build completes after its call was answered: its session is
  // dropped and the name freed, so the name's next session is this one.
  absl::StatusOr<v1::Session> next = CreateOnceNameIsFree("late");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->topology_source(), kTwoLlcTopology);
}

TEST_F(SessionBuildTest, CancelledCreationIsNotRegistered) {
  auto stub = v1::SchedCache::NewStub(
      grpc::CreateChannel(address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  const v1::CreateSessionRequest request = Request("gone", kHeldSpec);
  v1::Session response;
  absl::Notification answered;
  grpc::Status status;
  stub->async()->CreateSession(&context, &request, &response,
                               [&](grpc::Status s) {
                                 status = std::move(s);
                                 answered.Notify();
                               });
  gate_->WaitForHeld(1);
  context.TryCancel();
  answered.WaitForNotification();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  // The client's cancellation reaches the server's reactor a moment later
  // (long on a loaded CI machine); let it arrive before the build may end.
  absl::SleepFor(absl::Seconds(1));
  gate_->Release();
  absl::StatusOr<v1::Session> next = CreateOnceNameIsFree("gone");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->topology_source(), kTwoLlcTopology);
}

TEST_F(SessionBuildTest, CreationThatExpiresWhileQueuedIsNeverBuilt) {
  // Both workers hold a build; the third creation queues behind them.
  AsyncCreate first(address(), Request("first", kHeldSpec));
  AsyncCreate second(address(), Request("second", kHeldSpec));
  gate_->WaitForHeld(2);
  constexpr char kQueuedSpec[] = "synthetic:pack:1 l3:2 core:1 pu:1";
  AsyncCreate queued(address(), Request("queued", kQueuedSpec),
                     absl::Milliseconds(300));
  EXPECT_EQ(queued.Wait().status().code(), absl::StatusCode::kDeadlineExceeded);
  // The server's copy of the deadline was set when the request arrived, so
  // it trails the client's by the request's transit time (long on a loaded
  // CI machine); pass it too before a worker looks at the queue.
  PassExpiredDeadline();
  gate_->Release();
  ASSERT_TRUE(first.Wait().ok());
  ASSERT_TRUE(second.Wait().ok());
  absl::StatusOr<v1::Session> next = CreateOnceNameIsFree("queued");
  ASSERT_TRUE(next.ok()) << next.status();
  // A worker took the expired creation off the queue and skipped it.
  EXPECT_EQ(gate_->Builds(kQueuedSpec), 0);
}

TEST_F(SessionBuildTest, StopAnswersPendingCreationsWithoutWaitingForBuild) {
  AsyncCreate slow(address(), Request("slow", kHeldSpec));
  gate_->WaitForHeld(1);
  absl::Notification stopped;
  int builds_running = -1;
  std::thread stopper([&] {
    builds_running = test_->server->Stop(absl::Seconds(30));
    stopped.Notify();
  });
  // Stop returns, and the creation is answered, with the build still held.
  const bool stopped_while_held =
      stopped.WaitForNotificationWithTimeout(absl::Seconds(60));
  gate_->Release();
  stopper.join();
  EXPECT_TRUE(stopped_while_held);
  EXPECT_EQ(builds_running, 1);
  EXPECT_EQ(slow.Wait().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(slow.Wait().status().message(), HasSubstr("stopping"));
}

TEST_F(SessionBuildTest, FailedBuildReportsItsErrorAndFreesTheName) {
  v1::CreateSessionRequest request = TwoLlcSessionRequest("bad-xml");
  request.mutable_topology()->set_xml("<topology><object");
  absl::Status failed = client().CreateSession(request).status();
  EXPECT_EQ(failed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(failed.message(), HasSubstr("uploaded.xml"));
  EXPECT_TRUE(client().CreateSession(TwoLlcSessionRequest("bad-xml")).ok());
}

}  // namespace
}  // namespace schedcache::test_support
