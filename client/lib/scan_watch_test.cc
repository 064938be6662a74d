// ScanWatch against a scripted server: the request carries the options,
// every scan comes in order and then the server's status; reading past the
// end stays at the end; Cancel ends a stream the server keeps open.
#include "schedcache/client.h"

#include <memory>

#include "client/lib/scripted_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::client {
namespace {

using ::testing::ElementsAre;
using Script = StreamScript<v1::WatchScansResponse>;

v1::WatchScansResponse Scan(int32_t tgid) {
  v1::WatchScansResponse response;
  response.mutable_scan()->set_tgid(tgid);
  return response;
}

class ScanWatchTest : public ScriptedServerTest {
 protected:

};

TEST_F(ScanWatchTest, ScansComeInOrderThenTheEndStaysTheEnd) {
  server_->AddScanWatch(Script::Attached(
      {Scan(6), Scan(7)},
      grpc::Status(grpc::StatusCode::NOT_FOUND, "session \"s\" was deleted")));
  ScanWatchOptions options;
  options.policy = "visited-scan";
  options.tgids = {6, 7};
  std::unique_ptr<ScanWatch> watch = client_->WatchScans("s", options);
  ASSERT_TRUE(watch->attached());
  std::optional<v1::WatchScansResponse> first = watch->Next();
  std::optional<v1::WatchScansResponse> second = watch->Next();
  ASSERT_TRUE(first.has_value() && second.has_value());
  EXPECT_EQ(first->scan().tgid(), 6);
  EXPECT_EQ(second->scan().tgid(), 7);
  EXPECT_FALSE(watch->Next().has_value());
  // The stream was finished once; reading again must not touch it.
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(watch->Finish().message(), "session \"s\" was deleted");

  ASSERT_EQ(server_->scan_requests().size(), 1u);
  const v1::WatchScansRequest request = server_->scan_requests()[0];
  EXPECT_EQ(request.session(), "s");
  EXPECT_EQ(request.policy(), "visited-scan");
  EXPECT_THAT(request.tgid(), ElementsAre(6, 7));
}

TEST_F(ScanWatchTest, CancelEndsAStreamTheServerKeepsOpen) {
  server_->AddScanWatch(Script::Held({Scan(6)}));
  std::unique_ptr<ScanWatch> watch = client_->WatchScans("s");
  ASSERT_TRUE(watch->attached());
  ASSERT_TRUE(watch->Next().has_value());
  watch->Cancel();
  EXPECT_FALSE(watch->Next().has_value());
  EXPECT_EQ(watch->Finish().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace schedcache::client
