#include "policies/plugin_loader.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "policies/plugin_abi.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

PolicyRegistryBuilder WithBuiltins() {
  PolicyRegistryBuilder builder;
  EXPECT_TRUE(RegisterBuiltinPolicies(builder).ok());
  return builder;
}

TEST(PluginLoader, LoadsTheExamplePluginAndRunsIt) {
  PolicyRegistryBuilder builder = WithBuiltins();
  ASSERT_TRUE(
      LoadPolicyPlugin(test_support::ExamplePluginPath(), builder).ok());
  const PolicyRegistry registry = std::move(builder).Build();
  const PolicyFactory* factory = registry.Find("llc-most-runtime");
  ASSERT_NE(factory, nullptr);
  ASSERT_EQ(factory->tunables().size(), 1u);

  EngineOptions options;
  options.trigger = ScanTrigger::kQuery;
  auto engine = Engine::Create(test_support::MakeGrid({}), registry,
                               {{"llc-most-runtime", {}}}, options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  // 1000 ns on CPU 0 (LLC 0), 600 + 600 on CPUs 4 and 5 (LLC 1): LLC 1
  // holds 1200 > 1000 and wins without any 2x rule; its top CPU is 4.
  ASSERT_TRUE(
      (*engine)
          ->ApplySample(test_support::SampleAt(0, 0, 9, 1, 1000, false, 3))
          .ok());
  ASSERT_TRUE((*engine)
                  ->ApplySample(test_support::SampleAt(0, 4, 9, 2, 600, false))
                  .ok());
  ASSERT_TRUE((*engine)
                  ->ApplySample(test_support::SampleAt(0, 5, 9, 3, 600, false))
                  .ok());
  std::vector<PolicyDecision> d = test_support::ScanNow(**engine, 9, 1, 0);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(d[0].scanned_now);
  EXPECT_EQ(d[0].preferred_llc, 1);
  EXPECT_EQ(d[0].preferred_cpu, 4);
  EXPECT_EQ(d[0].cost.cpus_scanned, 3);
  EXPECT_EQ(d[0].cost.llcs_scanned, 2);
}

TEST(PluginLoader, RefusesAFileWithoutTheEntryPoint) {
  PolicyRegistryBuilder builder = WithBuiltins();
  absl::Status status =
      LoadPolicyPlugin(SCHEDCACHE_FIXTURE_NO_ENTRY_POINT, builder);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("no entry point"));
  EXPECT_THAT(status.message(), HasSubstr(SCHEDCACHE_FIXTURE_NO_ENTRY_POINT));
}

TEST(PluginLoader, RefusesAnotherAbiVersion) {
  PolicyRegistryBuilder builder = WithBuiltins();
  absl::Status status = LoadPolicyPlugin(SCHEDCACHE_FIXTURE_WRONG_ABI, builder);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat("ABI version ",
                                     kPolicyPluginAbiVersion + 1)));
}

TEST(PluginLoader, RefusesANameAlreadyRegistered) {
  PolicyRegistryBuilder builder = WithBuiltins();
  absl::Status status =
      LoadPolicyPlugin(SCHEDCACHE_FIXTURE_DUPLICATE_NAME, builder);
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(status.message(), HasSubstr("'full-scan'"));
  // The built-in is still the one registered.
  const PolicyRegistry registry = std::move(builder).Build();
  EXPECT_THAT(std::string(registry.Find("full-scan")->description()),
              HasSubstr("mainline"));
}

TEST(PluginLoader, ReportsAMissingFile) {
  PolicyRegistryBuilder builder = WithBuiltins();
  absl::Status status = LoadPolicyPlugin("/nonexistent/plugin.so", builder);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/plugin.so"));
}

TEST(BuildPolicyRegistry, StopsAtTheFirstBrokenPlugin) {
  auto registry = BuildPolicyRegistry(
      {test_support::ExamplePluginPath(), SCHEDCACHE_FIXTURE_WRONG_ABI});
  EXPECT_EQ(registry.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace schedcache
