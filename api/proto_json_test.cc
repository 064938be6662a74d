// MessageToJson and MessageFromJson: the dialect's keys and values, and a
// clear error for JSON that is not the message's (protobuf names the field
// by its proto name and path, e.g. policies[0].preferred_llc_changes).
#include <string>

#include "api/proto_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// lowerCamelCase keys, 64-bit integers as strings (2^53 + 1 would lose its
// last digit as a JSON number), defaults written, an absent oneof not.
TEST(MessageToJson, WritesLowerCamelKeysDefaultsAndInt64AsStrings) {
  v1::PolicyReport report;
  report.set_policy("full-scan");
  report.set_scans_skipped(9'007'199'254'740'993);
  const std::string json = MessageToJson(report).value();
  EXPECT_THAT(json, HasSubstr(R"("policy":"full-scan")"));
  EXPECT_THAT(json, HasSubstr(R"("scansSkipped":"9007199254740993")"));
  EXPECT_THAT(json, HasSubstr(R"("scansAborted":"0")"));
  EXPECT_THAT(json, HasSubstr(R"("runtimeOnPreferredLlc":0)"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"agreement\"")));
}

TEST(MessageFromJson, ReadsWhatMessageToJsonWrote) {
  v1::PolicyReport report;
  report.set_policy("visited-scan");
  report.set_scans(9'007'199'254'740'993);
  report.set_agreement(1.0 / 3.0);
  v1::PolicyReport back;
  back.set_scans_aborted(7);  // cleared by the read
  ASSERT_TRUE(MessageFromJson(MessageToJson(report).value(), back).ok());
  EXPECT_EQ(back.SerializeAsString(), report.SerializeAsString());
}

TEST(MessageFromJson, NamesTheFieldOfAWrongValueAndAnUnknownKey) {
  v1::PolicyReport back;
  const absl::Status negative =
      MessageFromJson(R"({"preferredLlcChanges": -3})", back);
  EXPECT_TRUE(absl::IsInvalidArgument(negative));
  EXPECT_THAT(negative.message(), HasSubstr("schedcache.v1.PolicyReport"));
  EXPECT_THAT(negative.message(), HasSubstr("preferred_llc_changes"));
  EXPECT_THAT(negative.message(), HasSubstr("-3"));
  const absl::Status unknown = MessageFromJson(R"({"name": "x"})", back);
  EXPECT_TRUE(absl::IsInvalidArgument(unknown));
  EXPECT_THAT(unknown.message(), HasSubstr("name"));
  EXPECT_TRUE(absl::IsInvalidArgument(MessageFromJson("{\"policy\": ", back)));
}

}  // namespace
}  // namespace schedcache
