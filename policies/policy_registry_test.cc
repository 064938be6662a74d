#include "policies/policy_registry.h"

#include <memory>
#include <utility>

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
  EXPECT_EQ(tunables->hz, 250);
  EXPECT_EQ(tunables->epoch_period_jiffies, 0);  // HZ / 100
  EXPECT_EQ(tunables->clock_anchor_ns, 0);
  EXPECT_EQ(tunables->clock_anchor_jiffies, 0);
  EXPECT_EQ(tunables->epoch_anchor_jiffies, -1);
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
  EXPECT_EQ(tunables->hz, 100'000);
  EXPECT_EQ(tunables->epoch_period_jiffies, (int64_t{1} << 32) - 1);
  EXPECT_EQ(tunables->clock_anchor_ns, int64_t{1} << 62);
  EXPECT_EQ(tunables->clock_anchor_jiffies, int64_t{1} << 62);
  EXPECT_EQ(tunables->epoch_anchor_jiffies, int64_t{1} << 62);
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
  EXPECT_THAT(visited,
              ElementsAre("hz", "epoch_period_jiffies", "clock_anchor_ns",
                          "clock_anchor_jiffies", "epoch_anchor_jiffies",
                          "affinity_timeout_epochs", "aggr_tolerance",
                          "numa_balancing", "enable", "max_clock_jump_ns",
                          "process_idle_timeout_ns"));
}

TEST(ParseTunableValue, ReadsNumbersAndNamedValues) {
  const std::vector<TunableSpec>& specs = ModelTunables::Specs();
  const TunableSpec& enable = specs[8];
  ASSERT_EQ(enable.name, "enable");
  EXPECT_EQ(*ParseTunableValue(enable, "off"), 2);
  EXPECT_EQ(*ParseTunableValue(specs[7], "true"), 1);
  EXPECT_EQ(*ParseTunableValue(specs[0], "300"), 300);
  EXPECT_THAT(ParseTunableValue(specs[0], "ten").status().message(),
              HasSubstr("hz"));
}

TEST(ModelTunables, EpochPeriodIsHzOverOneHundredAsTheKernelsDefault) {
  // llc_epoch_period = HZ / 100, and __update_mm_sched uses at least 1:
  // 100 -> 1 (10 ms), 250 -> 2 (8 ms), 300 -> 3 (3 x 3,333,333 ns = 10 ms
  // less 1 ns), 1000 -> 10 (10 ms); 50 -> 0, so 1 (20 ms).
  const std::pair<int64_t, int64_t> hz_period[] = {
      {100, 1}, {250, 2}, {300, 3}, {1000, 10}, {50, 1}};
  for (const auto& [hz, period] : hz_period) {
    ModelTunables tunables;
    tunables.hz = hz;
    EXPECT_EQ(tunables.epoch_period(), period) << "hz " << hz;
  }
  ModelTunables tunables;
  tunables.hz = 300;
  EXPECT_EQ(tunables.epoch_period() * tunables.tick_ns(), 9'999'999);
  tunables.epoch_period_jiffies = 7;  // given: taken as is
  EXPECT_EQ(tunables.epoch_period(), 7);
}

TEST(ModelTunables, TheRetiredEpochPeriodNsNamesItsReplacements) {
  absl::StatusOr<ModelTunables> tunables =
      ModelTunables::FromValues({{"epoch_period_ns", 10'000'000}});
  EXPECT_EQ(tunables.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tunables.status().message(),
              HasSubstr("epoch_period_ns is gone"));
  EXPECT_THAT(tunables.status().message(), HasSubstr("epoch_period_jiffies"));
}

TEST(KernelClockValues, SetsTheClockTunablesFromACaptureHeader) {
  // # schedcache_kernel_clock: hz=250 jiffies=4294937296 at_ns=120000000000
  //   epoch_period=2 cpu_epoch_next=4294937297
  absl::StatusOr<TunableValues> values = KernelClockValues(
      KernelClock{.hz = 250, .jiffies = 4'294'937'296, .at_ns = 120'000'000'000,
                  .epoch_period = 2, .cpu_epoch_next = 4'294'937'297});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->at("hz"), 250);
  EXPECT_EQ(values->at("epoch_period_jiffies"), 2);
  EXPECT_EQ(values->at("clock_anchor_ns"), 120'000'000'000);
  EXPECT_EQ(values->at("clock_anchor_jiffies"), 4'294'937'296);
  EXPECT_EQ(values->at("epoch_anchor_jiffies"), 4'294'937'297);
  const absl::StatusOr<TunableValues> bad =
      KernelClockValues(KernelClock{.hz = 0, .epoch_period = 2});
  EXPECT_THAT(bad.status().message(), HasSubstr("kernel clock header"));
  EXPECT_THAT(bad.status().message(), HasSubstr("hz = 0"));
}

}  // namespace
}  // namespace schedcache
