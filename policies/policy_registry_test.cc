#include "policies/policy_registry.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "policies/tunables.h"

namespace schedcache {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FakeFactory : public PolicyFactory {
 public:
  explicit FakeFactory(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "fake"; }
  std::vector<TunableSpec> tunables() const override {
    return {{"depth", "how deep, CPUs", 4, 1, 16, {}}};
  }
  std::unique_ptr<Policy> Create(ModelContext&,
                                 const TunableValues&) const override {
    return nullptr;
  }

 private:
  std::string name_;
};

TEST(PolicyRegistry, BuiltinsAreRegisteredInOrder) {
  PolicyRegistryBuilder builder;
  ASSERT_TRUE(RegisterBuiltinPolicies(builder).ok());
  const PolicyRegistry registry = std::move(builder).Build();
  std::vector<std::string> names;
  for (const PolicyFactory* f : registry.factories()) {
    names.emplace_back(f->name());
    EXPECT_FALSE(f->description().empty());
  }
  EXPECT_THAT(names, ElementsAre("full-scan", "visited-scan", "none", "kernel"));
  EXPECT_NE(registry.Find("visited-scan"), nullptr);
  EXPECT_EQ(registry.Find("nope"), nullptr);
}

TEST(PolicyRegistry, RejectsADuplicateName) {
  PolicyRegistryBuilder builder;
  ASSERT_TRUE(RegisterBuiltinPolicies(builder).ok());
  absl::Status status = builder.Register(std::make_unique<FakeFactory>("none"));
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("'none'"));
}

TEST(PolicyRegistry, RejectsNamesThatAreNotLowerKebab) {
  PolicyRegistryBuilder builder;
  for (const char* bad : {"", "Full-Scan", "full_scan", "-x", "x-", "a--b"}) {
    EXPECT_EQ(builder.Register(std::make_unique<FakeFactory>(bad)).code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(builder.Register(nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(builder.Register(std::make_unique<FakeFactory>("x2-y")).ok());
}

TEST(PolicyFactory, ValidateNamesThePolicyTheTunableAndTheRange) {
  FakeFactory factory("fake");
  EXPECT_TRUE(factory.Validate({{"depth", 16}}).ok());
  absl::Status status = factory.Validate({{"depth", 17}});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("fake"));
  EXPECT_THAT(status.message(), HasSubstr("depth"));
  EXPECT_THAT(status.message(), HasSubstr("1..16"));
  status = factory.Validate({{"width", 1}});
  EXPECT_THAT(status.message(), HasSubstr("unknown tunable 'width'"));
}

TEST(ModelTunables, DefaultsMatchDesign) {
  auto tunables = ModelTunables::FromValues({});
  ASSERT_TRUE(tunables.ok());
  EXPECT_EQ(tunables->epoch_period_ns, 10'000'000);
  EXPECT_EQ(tunables->affinity_timeout_epochs, 5);
  EXPECT_EQ(tunables->aggr_tolerance, 1);
  EXPECT_FALSE(tunables->numa_balancing);
  EXPECT_EQ(tunables->enable, Enable::kAuto);
}

TEST(ModelTunables, RejectsOutOfRangeWithTheAllowedRange) {
  auto tunables = ModelTunables::FromValues({{"aggr_tolerance", 101}});
  EXPECT_EQ(tunables.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tunables.status().message(), HasSubstr("aggr_tolerance = 101"));
  EXPECT_THAT(tunables.status().message(), HasSubstr("0..100"));
}

// Every tunable at its maximum differs from its default (the table's
// ranges), so a getter or setter bound to the wrong member shows here.
TEST(ModelTunables, FromValuesAndToValuesCarryEveryTunable) {
  TunableValues at_max;
  for (const TunableSpec& spec : ModelTunables::Specs()) {
    ASSERT_NE(spec.max_value, spec.default_value) << spec.name;
    at_max[spec.name] = spec.max_value;
  }
  absl::StatusOr<ModelTunables> tunables = ModelTunables::FromValues(at_max);
  ASSERT_TRUE(tunables.ok()) << tunables.status();
  EXPECT_EQ(tunables->epoch_period_ns, int64_t{1} << 40);
  EXPECT_EQ(tunables->affinity_timeout_epochs, 1'000'000);
  EXPECT_EQ(tunables->aggr_tolerance, 100);
  EXPECT_TRUE(tunables->numa_balancing);
  EXPECT_EQ(tunables->enable, Enable::kOff);
  EXPECT_EQ(tunables->max_clock_jump_ns, int64_t{1} << 62);
  EXPECT_EQ(tunables->process_idle_timeout_ns, int64_t{1} << 62);
  EXPECT_EQ(tunables->ToValues(), at_max);
  std::vector<std::string> visited;
  tunables->ForEachValue([&](const TunableSpec& spec, int64_t value) {
    visited.push_back(spec.name);
    EXPECT_EQ(value, spec.max_value) << spec.name;
  });
  EXPECT_THAT(visited, ElementsAre("epoch_period_ns", "affinity_timeout_epochs",
                                   "aggr_tolerance", "numa_balancing",
                                   "enable", "max_clock_jump_ns",
                                   "process_idle_timeout_ns"));
}

TEST(ParseTunableValue, ReadsNumbersAndNamedValues) {
  const std::vector<TunableSpec>& specs = ModelTunables::Specs();
  const TunableSpec& enable = specs[4];
  ASSERT_EQ(enable.name, "enable");
  EXPECT_EQ(*ParseTunableValue(enable, "off"), 2);
  EXPECT_EQ(*ParseTunableValue(specs[3], "true"), 1);
  EXPECT_EQ(*ParseTunableValue(specs[0], "5000000"), 5'000'000);
  EXPECT_THAT(ParseTunableValue(specs[0], "ten").status().message(),
              HasSubstr("epoch_period_ns"));
}

}  // namespace
}  // namespace schedcache
