// BuildCreateSessionRequest: each part of a SessionSpec lands in its field
// of the request, an xml: topology travels as the file's bytes, and each
// bad part is refused with a message naming it.
#include "schedcache/session_request.h"

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace schedcache::client {
namespace {

TEST(BuildCreateSessionRequest, EachPartOfTheSpecLandsInItsField) {
  SessionSpec spec;
  spec.topology = "synthetic:2x4";
  spec.policies = {"full-scan", "visited-scan"};
  spec.trigger = "query";
  // The value keeps everything after the first '='.
  spec.settings = {"full-scan.llc_aggr_tolerance=a=b"};
  absl::StatusOr<v1::CreateSessionRequest> request =
      BuildCreateSessionRequest(spec, "s1");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->name(), "s1");
  EXPECT_EQ(request->topology().spec(), "synthetic:2x4");
  ASSERT_EQ(request->policies_size(), 2);
  EXPECT_EQ(request->policies(1), "visited-scan");
  EXPECT_EQ(request->trigger(), v1::SCAN_TRIGGER_QUERY);
  ASSERT_EQ(request->tunables_size(), 1);
  EXPECT_EQ(request->tunables(0).name(), "full-scan.llc_aggr_tolerance");
  EXPECT_EQ(request->tunables(0).value(), "a=b");
}

TEST(BuildCreateSessionRequest, AnXmlTopologyIsSentAsTheFilesBytes) {
  const std::string path =
      std::string(::testing::TempDir()) + "/session_request_test.xml";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("<topology/>", file);
  std::fclose(file);
  SessionSpec spec;
  spec.topology = "xml:" + path;
  absl::StatusOr<v1::CreateSessionRequest> request =
      BuildCreateSessionRequest(spec, "s");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->topology().xml(), "<topology/>");
  EXPECT_EQ(request->topology().xml_name(), spec.topology);
  std::remove(path.c_str());
}

TEST(BuildCreateSessionRequest, ABadPartIsRefusedByName) {
  SessionSpec no_equals;
  no_equals.topology = "host";
  no_equals.settings = {"=5"};  // an empty key is no KEY=VALUE either
  absl::Status status = BuildCreateSessionRequest(no_equals, "s").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "--set \"=5\" is not KEY=VALUE");

  SessionSpec bad_trigger;
  bad_trigger.topology = "host";
  bad_trigger.trigger = "often";
  status = BuildCreateSessionRequest(bad_trigger, "s").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "trigger \"often\" is not one of: tick, query");

  SessionSpec missing;
  missing.topology = "xml:/nonexistent/schedcache/t.xml";
  status = BuildCreateSessionRequest(missing, "s").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(status.message().find("/nonexistent/schedcache/t.xml"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace schedcache::client
