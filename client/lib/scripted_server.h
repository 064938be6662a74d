// ScriptedServer: a SchedCache server for the client library's unit tests,
// on a Unix socket, whose streams say exactly what the test scripted and
// record what the client sent. It stands in for schedcached where a test
// needs a stream to break, be refused or carry a trailer at a chosen
// point, which a real server does only by being stopped or restarted.
//
// Thread contract: thread-safe (gRPC runs its handlers on its own threads).
#ifndef SCHEDCACHE_CLIENT_LIB_SCRIPTED_SERVER_H_
#define SCHEDCACHE_CLIENT_LIB_SCRIPTED_SERVER_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "schedcache/v1/schedcache.grpc.pb.h"

namespace schedcache::client {

// StreamScript is what one server stream does: attach (send the
// attached-metadata key) or refuse (trailers only), send `responses`,
// then, when `hold`, stay open until the server is destroyed, and end
// with `end`.
template <typename Response>
struct StreamScript {
  static StreamScript Attached(std::vector<Response> responses,
                               grpc::Status end = grpc::Status::OK) {
    return StreamScript{true, std::move(responses), false, std::move(end)};
  }
  static StreamScript Refused(grpc::Status end) {
    return StreamScript{false, {}, false, std::move(end)};
  }
  static StreamScript Held(std::vector<Response> responses) {
    return StreamScript{true, std::move(responses), true, grpc::Status::OK};
  }

  bool attach = true;
  std::vector<Response> responses;
  bool hold = false;
  grpc::Status end;
};

class ScriptedServer {
 public:
  // Start listens on a fresh Unix socket; nullptr if it cannot.
  static std::unique_ptr<ScriptedServer> Start();
  ~ScriptedServer();  // releases held streams, then shuts down

  // address is "unix:PATH", for client::Options.
  const std::string& address() const { return address_; }

  // Ingest: every stream records its batches, then ends with `end`; a
  // `trailer` rides as the failed stream's summary (kIngestSummaryTrailer)
  // and `response` is the OK stream's. Default: OK, an empty summary.
  void AnswerIngest(grpc::Status end, v1::IngestSummary response,
                    std::optional<v1::IngestSummary> trailer);
  std::vector<v1::IngestBatch> batches() const;

  // WatchPreferences and WatchScans: each call runs the next script queued
  // and records its request; a call with no script left is refused
  // FAILED_PRECONDITION.
  void AddWatch(StreamScript<v1::WatchPreferencesResponse> script);
  std::vector<v1::WatchPreferencesRequest> watch_requests() const;
  void AddScanWatch(StreamScript<v1::WatchScansResponse> script);
  std::vector<v1::WatchScansRequest> scan_requests() const;

 private:
  class Service;
  ScriptedServer();

  std::string path_;
  std::string address_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

// ScriptedServerTest: the fixture of the client library's unit tests, a
// fresh ScriptedServer and a Client connected to it for each test.
class ScriptedServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = ScriptedServer::Start();
    ASSERT_NE(server_, nullptr);
    Options options;
    options.address = server_->address();
    client_ = Client::Connect(options);
  }

  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<Client> client_;
};

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_LIB_SCRIPTED_SERVER_H_
