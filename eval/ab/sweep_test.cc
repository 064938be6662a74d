#include "eval/ab/sweep.h"

#include <fstream>
#include <string>
#include <vector>

#include "eval/ab/testing/comparable_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

const PolicyRegistry& Registry() {
  static const PolicyRegistry* registry =
      new PolicyRegistry(*BuildPolicyRegistry({}));
  return *registry;
}

AbOptions Hackbench(int64_t duration_ns) {
  AbOptions options;
  options.input.kind = AbInputSpec::Kind::kWorkload;
  options.input.workload = WorkloadKind::kHackbench;
  options.workload.kind = WorkloadKind::kHackbench;
  options.workload.duration_ns = duration_ns;
  options.workload.groups = 1;
  options.workload.fds = 2;
  options.session.policies = {"full-scan", "visited-scan"};
  return options;
}

std::string Error(absl::string_view vary) {
  absl::StatusOr<SweepAxis> axis = ParseVary(vary);
  EXPECT_FALSE(axis.ok()) << vary;
  return std::string(axis.status().message());
}

TEST(ParseVary, ReadsListsAndExpandsRangesInOrder) {
  absl::StatusOr<SweepAxis> axis = ParseVary("affinity_timeout_epochs=7,1..3");
  ASSERT_TRUE(axis.ok()) << axis.status();
  EXPECT_EQ(axis->key, "affinity_timeout_epochs");
  EXPECT_THAT(axis->values, ElementsAre("7", "1", "2", "3"));
  // A topology source keeps its own '=' and ':'.
  axis = ParseVary("topology=synthetic:pack:2 l3:2 pu:2,xml:../m.xml");
  ASSERT_TRUE(axis.ok()) << axis.status();
  EXPECT_THAT(axis->values,
              ElementsAre("synthetic:pack:2 l3:2 pu:2", "xml:../m.xml"));
}

TEST(ParseVary, RejectsMalformedTextNamingIt) {
  EXPECT_THAT(Error("seed"), HasSubstr("--vary seed: want KEY="));
  EXPECT_THAT(Error("=1,2"), HasSubstr("--vary =1,2"));
  EXPECT_THAT(Error("seed=1,,2"), HasSubstr("empty value"));
  EXPECT_THAT(Error("seed="), HasSubstr("empty value"));
  EXPECT_THAT(Error("seed=5..1"), HasSubstr("range \"5..1\""));
  EXPECT_THAT(Error("seed=1..x"), HasSubstr("range \"1..x\""));
  EXPECT_THAT(Error("seed=1..100000"), HasSubstr("at most 10000"));
  EXPECT_THAT(Error("seed=1,2,1"), HasSubstr("value 1 is given twice"));
}

TEST(MakeSweepPlan, CombinesWithTheLastAxisFastest) {
  absl::StatusOr<SweepPlan> plan = MakeSweepPlan(
      Hackbench(10 * kMs),
      {*ParseVary("groups=1,2"), *ParseVary("affinity_timeout_epochs=3..5")},
      Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->runs.size(), 6u);
  EXPECT_THAT(plan->values[1], ElementsAre("1", "4"));
  EXPECT_THAT(plan->values[5], ElementsAre("2", "5"));
  EXPECT_EQ(plan->runs[5].workload.groups, 2);
  EXPECT_THAT(plan->runs[5].session.settings,
              ElementsAre("affinity_timeout_epochs=5"));
}

std::string PlanError(const AbOptions& base, std::vector<SweepAxis> axes) {
  absl::StatusOr<SweepPlan> plan =
      MakeSweepPlan(base, std::move(axes), Registry());
  EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << plan.status();
  return std::string(plan.status().message());
}

TEST(MakeSweepPlan, RefusesBadValuesNamingKeyAndValue) {
  const AbOptions base = Hackbench(10 * kMs);
  EXPECT_THAT(PlanError(base, {*ParseVary("affinity_timeout_epochs=1,-3")}),
              HasSubstr("--vary affinity_timeout_epochs=-3: "));
  EXPECT_THAT(PlanError(base, {*ParseVary("no_such_tunable=1")}),
              HasSubstr("--vary no_such_tunable=1: tunables: \"no_such_tunable\" is "
                        "neither"));
  EXPECT_THAT(PlanError(base, {*ParseVary("groups=2,x")}),
              HasSubstr("--vary groups=x: not an integer"));
  EXPECT_THAT(PlanError(base, {*ParseVary("spill-probability=0.5,2")}),
              HasSubstr("--vary spill-probability=2: must be in 0..1"));
  EXPECT_THAT(PlanError(base, {*ParseVary("hz=0")}),
              HasSubstr("--vary hz=0: must be in 1..10000"));
  // 2 * 60000 * 1 workers is over the workload's limit only in combination.
  EXPECT_THAT(PlanError(base, {*ParseVary("groups=60000"), *ParseVary("fds=1")}),
              HasSubstr("--vary groups=60000 fds=1: "));
}

TEST(MakeSweepPlan, RefusesAxesThatCannotWork) {
  AbOptions base = Hackbench(10 * kMs);
  EXPECT_THAT(PlanError(base, {}), HasSubstr("at least one --vary"));
  EXPECT_THAT(PlanError(base, {*ParseVary("seed=1,2"), *ParseVary("seed=3")}),
              HasSubstr("--vary seed: the key is varied twice"));
  EXPECT_THAT(PlanError(base, {*ParseVary("seed=1..100"),
                               *ParseVary("fds=1..101")}),
              HasSubstr("more than 10000 combinations"));
  base.session.settings = {"aggr_tolerance=100"};
  EXPECT_THAT(PlanError(base, {*ParseVary("aggr_tolerance=1,2")}),
              HasSubstr("also given as --set aggr_tolerance=100"));
  AbOptions trace = base;
  trace.input = *ParseAbInput("trace:/tmp/none");
  EXPECT_THAT(PlanError(trace, {*ParseVary("groups=1,2")}),
              HasSubstr("--vary groups: a workload flag"));
}

TEST(RunSweep, EveryRowEqualsTheSameRunOfAb) {
  const AbOptions base = Hackbench(300 * kMs);
  absl::StatusOr<SweepPlan> plan = MakeSweepPlan(
      base, {*ParseVary("fds=2,3"), *ParseVary("affinity_timeout_epochs=1,5")},
      Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<size_t> progress;
  const SweepResult sweep =
      RunSweep(*plan, Registry(), /*jobs=*/3, "workload:hackbench",
               [&](size_t done, size_t total) {
                 EXPECT_EQ(total, 4u);
                 progress.push_back(done);
               });
  ASSERT_TRUE(sweep.failures.empty()) << sweep.failures[0].error;
  ASSERT_EQ(sweep.rows.size(), 4u);
  EXPECT_EQ(progress.back(), 4u);
  // Three of the four runs, built by hand as `ab --fds F --set
  // affinity_timeout_epochs=T` would build them.
  const std::vector<std::pair<int, std::string>> by_hand = {
      {2, "1"}, {3, "1"}, {3, "5"}};
  const std::vector<size_t> rows = {0, 2, 3};
  for (size_t i = 0; i < by_hand.size(); ++i) {
    AbOptions one = base;
    one.workload.fds = by_hand[i].first;
    one.session.settings = {
        absl::StrCat("affinity_timeout_epochs=", by_hand[i].second)};
    absl::StatusOr<AbResult> alone =
        RunAb(one, Registry(), InProcessSessions(Registry()));
    ASSERT_TRUE(alone.ok()) << alone.status();
    const SweepRow& row = sweep.rows[rows[i]];
    EXPECT_THAT(row.values, ElementsAre(absl::StrCat(by_hand[i].first),
                                        by_hand[i].second));
    ASSERT_GT(alone->policies[0].report.scans, 0u);  // something to compare
    EXPECT_EQ(ComparableJson(row.result), ComparableJson(*alone)) << i;
  }
}

TEST(MakeSweepPlan, GroupByValuesAreRulesAndABadOneIsNamed) {
  const AbOptions base = Hackbench(10 * kMs);
  absl::StatusOr<SweepPlan> plan =
      MakeSweepPlan(base, {*ParseVary("group-by=tgid,comm")}, Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->runs.size(), 2u);
  EXPECT_EQ(plan->runs[0].group_by.kind, GroupBy::Kind::kTgid);
  EXPECT_EQ(plan->runs[1].group_by.kind, GroupBy::Kind::kComm);
  // Not a tunable: the settings stay as they were.
  EXPECT_TRUE(plan->runs[1].session.settings.empty());
  EXPECT_THAT(PlanError(base, {*ParseVary("group-by=tgid,cgroup")}),
              HasSubstr("--vary group-by=cgroup: --group-by cgroup needs each "
                        "process's cgroup path, and input workload:hackbench"));
  EXPECT_THAT(PlanError(base, {*ParseVary("group-by=pid")}),
              HasSubstr("--vary group-by=pid: \"pid\" is not tgid, comm"));
}

TEST(RunSweep, GroupByTgidAndCommRunTwoConfigurations) {
  const AbOptions base = Hackbench(100 * kMs);
  absl::StatusOr<SweepPlan> plan =
      MakeSweepPlan(base, {*ParseVary("group-by=tgid,comm")}, Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const SweepResult sweep =
      RunSweep(*plan, Registry(), /*jobs=*/2, "workload:hackbench", nullptr);
  ASSERT_TRUE(sweep.failures.empty()) << sweep.failures[0].error;
  ASSERT_EQ(sweep.rows.size(), 2u);
  EXPECT_THAT(sweep.rows[0].values, ElementsAre("tgid"));
  EXPECT_THAT(sweep.rows[1].values, ElementsAre("comm"));
  // tgid is the run without the rule; comm is named in its input.
  absl::StatusOr<AbResult> alone =
      RunAb(base, Registry(), InProcessSessions(Registry()));
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(ComparableJson(sweep.rows[0].result), ComparableJson(*alone));
  EXPECT_THAT(sweep.rows[1].result.input.description,
              HasSubstr(" group-by=comm"));
}

// A capture as record writes it: srv 100 and cli 200 in one cgroup, each on
// a CPU of its own for 10 ms.
TEST(RunSweep, GroupByTgidCommAndCgroupRunOnACapture) {
  const std::string path = ::testing::TempDir() + "/sweep_capture.txt";
  std::ofstream(path)
      << "# schedcache_cgroup: 100 /app\n"
         "# schedcache_cgroup: 200 /app\n"
         "  <idle>-0 (-------) [000] 1.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120\n"
         "  <idle>-0 (-------) [001] 1.000000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cli next_pid=200 next_prio=120\n"
         "   srv-100 (    100) [000] 1.010000000: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
         "   cli-200 (    200) [001] 1.010000000: sched_switch: prev_comm=cli prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
  AbOptions base;
  base.input = *ParseAbInput("trace:" + path);
  base.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  absl::StatusOr<SweepPlan> plan = MakeSweepPlan(
      base, {*ParseVary("group-by=tgid,comm,cgroup")}, Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const SweepResult sweep =
      RunSweep(*plan, Registry(), /*jobs=*/2, "trace:" + path, nullptr);
  ASSERT_TRUE(sweep.failures.empty()) << sweep.failures[0].error;
  ASSERT_EQ(sweep.rows.size(), 3u);
  EXPECT_THAT(sweep.rows[2].values, ElementsAre("cgroup"));
  EXPECT_THAT(sweep.rows[2].result.input.description,
              HasSubstr(" group-by=cgroup"));
  EXPECT_GT(sweep.rows[2].result.input.samples, 0u);
}

TEST(RunSweep, AFailedCombinationIsListedAndTheOthersStillCount) {
  absl::StatusOr<SweepPlan> plan = MakeSweepPlan(
      Hackbench(50 * kMs),
      {*ParseVary("topology=synthetic:pack:2 l3:2 core:2 pu:1,"
                  "xml:/nonexistent/machine.xml")},
      Registry());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const SweepResult sweep =
      RunSweep(*plan, Registry(), /*jobs=*/2, "workload:hackbench", nullptr);
  ASSERT_EQ(sweep.rows.size(), 1u);
  EXPECT_THAT(sweep.rows[0].values,
              ElementsAre("synthetic:pack:2 l3:2 core:2 pu:1"));
  ASSERT_EQ(sweep.failures.size(), 1u);
  EXPECT_THAT(sweep.failures[0].values,
              ElementsAre("xml:/nonexistent/machine.xml"));
  EXPECT_THAT(sweep.failures[0].error, HasSubstr("/nonexistent/machine.xml"));
}

}  // namespace
}  // namespace schedcache::ab
