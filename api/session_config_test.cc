#include "api/session_config.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

// TunedFactory is a policy with one tunable, `depth` (0..10, default 3);
// BuildSessionSettings never creates policies, so Create is not needed.
class TunedFactory : public PolicyFactory {
 public:
  explicit TunedFactory(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "test"; }
  std::vector<TunableSpec> tunables() const override {
    return {TunableSpec{.name = "depth",
                        .description = "test depth",
                        .default_value = 3,
                        .min_value = 0,
                        .max_value = 10,
                        .value_names = {}}};
  }
  std::unique_ptr<Policy> Create(ModelContext&,
                                 const TunableValues&) const override {
    return nullptr;
  }

 private:
  std::string name_;
};

PolicyRegistry TwoTunedPolicies() {
  PolicyRegistryBuilder builder;
  EXPECT_TRUE(builder.Register(std::make_unique<TunedFactory>("alpha")).ok());
  EXPECT_TRUE(builder.Register(std::make_unique<TunedFactory>("beta")).ok());
  return std::move(builder).Build();
}

v1::CreateSessionRequest Request(
    std::initializer_list<std::pair<const char*, const char*>> settings) {
  v1::CreateSessionRequest request;
  request.set_name("s");
  request.add_policies("alpha");
  request.add_policies("beta");
  for (const auto& [name, value] : settings) {
    v1::TunableSetting* setting = request.add_tunables();
    setting->set_name(name);
    setting->set_value(value);
  }
  return request;
}

TEST(BuildSessionSettings, BareNameSetsEveryPolicyThatDeclaresIt) {
  const PolicyRegistry registry = TwoTunedPolicies();
  absl::StatusOr<SessionSettings> settings =
      BuildSessionSettings(Request({{"depth", "7"}}), registry, 10);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->policies[0].tunables.at("depth"), 7);
  EXPECT_EQ(settings->policies[1].tunables.at("depth"), 7);
}

TEST(BuildSessionSettings, QualifiedNameSetsOnePolicy) {
  const PolicyRegistry registry = TwoTunedPolicies();
  absl::StatusOr<SessionSettings> settings =
      BuildSessionSettings(Request({{"beta.depth", "2"}}), registry, 10);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_FALSE(settings->policies[0].tunables.contains("depth"));
  EXPECT_EQ(settings->policies[1].tunables.at("depth"), 2);
}

TEST(BuildSessionSettings, ModelTunablesParseNamedValues) {
  const PolicyRegistry registry = TwoTunedPolicies();
  absl::StatusOr<SessionSettings> settings = BuildSessionSettings(
      Request({{"enable", "on"}, {"numa_balancing", "true"},
               {"hz", "1000"}, {"epoch_period_jiffies", "4"}}),
      registry, 10);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->options.model.enable, Enable::kOn);
  EXPECT_TRUE(settings->options.model.numa_balancing);
  EXPECT_EQ(settings->options.model.hz, 1000);
  EXPECT_EQ(settings->options.model.epoch_period_jiffies, 4);
  EXPECT_EQ(settings->options.max_processes, 10);
  EXPECT_EQ(settings->options.trigger, ScanTrigger::kTick);
}

TEST(BuildSessionSettings, ErrorsNameTheField) {
  const PolicyRegistry registry = TwoTunedPolicies();
  EXPECT_THAT(BuildSessionSettings(Request({{"gamma.depth", "1"}}), registry, 1)
                  .status()
                  .message(),
              HasSubstr("gamma"));
  EXPECT_THAT(BuildSessionSettings(Request({{"alpha.width", "1"}}), registry, 1)
                  .status()
                  .message(),
              HasSubstr("width"));
  EXPECT_THAT(
      BuildSessionSettings(Request({{"nothing", "1"}}), registry, 1)
          .status()
          .message(),
      HasSubstr("nothing"));
  // The retired name says what replaced it.
  EXPECT_THAT(BuildSessionSettings(Request({{"epoch_period_ns", "10000000"}}),
                                   registry, 1)
                  .status()
                  .message(),
              HasSubstr("set hz and epoch_period_jiffies instead"));
  EXPECT_EQ(BuildSessionSettings(Request({{"depth", "deep"}}), registry, 1)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  v1::CreateSessionRequest repeated = Request({});
  repeated.add_policies("alpha");
  EXPECT_THAT(BuildSessionSettings(repeated, registry, 1).status().message(),
              HasSubstr("twice"));
}

TEST(ValidateSessionName, AcceptsAndRejects) {
  EXPECT_TRUE(ValidateSessionName("ab-1_x.y").ok());
  EXPECT_FALSE(ValidateSessionName("").ok());
  EXPECT_FALSE(ValidateSessionName("a b").ok());
  EXPECT_FALSE(ValidateSessionName(std::string(65, 'a')).ok());
}

}  // namespace
}  // namespace schedcache
