// One conformance fixture for every registered policy, built-ins and the
// example plugin alike, run by registry name over the same cases: no crash,
// identical results for identical input, cost fields filled.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::StreamShape;

struct Case {
  std::string name;
  std::shared_ptr<const Topology> topology;
  EngineOptions options;
  StreamShape stream;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  EngineOptions tick;
  EngineOptions query;
  query.trigger = ScanTrigger::kQuery;
  EngineOptions numa;
  numa.model.numa_balancing = true;
  numa.model.aggr_tolerance = 100;
  EngineOptions small;
  small.max_processes = 3;
  StreamShape busy;
  busy.revisit = false;
  busy.hand_overs = true;
  busy.scan_requests = true;
  busy.steps = 200;
  StreamShape numa_stream = busy;
  numa_stream.numa_nodes = true;
  cases.push_back({"grid_tick", test_support::MakeGrid({2, 3, 4}), tick, busy});
  cases.push_back(
      {"grid_query", test_support::MakeGrid({2, 3, 4}), query, busy});
  cases.push_back(
      {"grid_numa", test_support::MakeGrid({2, 3, 4, 2}), numa, numa_stream});
  cases.push_back(
      {"grid_evicting", test_support::MakeGrid({1, 2, 4}), small, busy});
  cases.push_back(
      {"one_llc_per_node", test_support::MakeGrid({2, 1, 4}), tick, busy});
  StreamShape epyc = busy;
  epyc.steps = 40;
  cases.push_back({"epyc384", test_support::MakeEpyc384(), tick, epyc});
  return cases;
}

std::vector<std::string> RegisteredNames() {
  std::vector<std::string> names;
  for (const PolicyFactory* f : test_support::TestRegistry().factories()) {
    names.emplace_back(f->name());
  }
  return names;
}

// Outcome is everything a policy answered, minus wall-clock time.
struct Outcome {
  std::vector<std::tuple<int, int, NoPreferenceReason, int, int64_t, int, int,
                         bool>>
      answers;
  EngineReport report;
};

Outcome RunCase(const std::string& policy, const Case& c) {
  Outcome out;
  auto engine = test_support::MakeEngine(c.topology, {policy}, c.options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return out;
  for (const test_support::StreamEvent& event :
       test_support::RandomStream(*c.topology, c.stream)) {
    auto decisions = test_support::Apply(**engine, event);
    if (!decisions.ok()) {
      // Only scan requests for processes or threads not seen yet fail.
      EXPECT_TRUE(std::holds_alternative<test_support::ScanRequest>(event))
          << decisions.status();
      continue;
    }
    for (const PolicyDecision& d : *decisions) {
      EXPECT_EQ(d.policy, policy);
      if (d.scanned_now) {
        EXPECT_GE(d.cost.cpus_scanned, 1);
        EXPECT_GE(d.cost.llcs_scanned, 1);
        EXPECT_LE(d.cost.llcs_scanned, d.cost.cpus_scanned);
        EXPECT_GE(d.cost.scan_ns, 0);
      }
      EXPECT_EQ(d.preferred_llc < 0, d.reason != NoPreferenceReason::kNone);
      if (d.preferred_llc >= 0) {
        EXPECT_EQ(c.topology->LlcOf(d.preferred_cpu), d.preferred_llc);
      }
      out.answers.emplace_back(d.preferred_cpu, d.preferred_llc, d.reason,
                               d.nr_running, d.nr_running_avg,
                               d.cost.cpus_scanned, d.cost.llcs_scanned,
                               d.scanned_now);
    }
  }
  out.report = (*engine)->Report();
  return out;
}

class PolicyConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyConformance, SameInputGivesSameAnswersAndCostsAreFilled) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    ASSERT_NE(c.topology, nullptr);
    const Outcome first = RunCase(GetParam(), c);
    const Outcome second = RunCase(GetParam(), c);
    EXPECT_EQ(first.answers, second.answers);
    const PolicyReport& a = first.report.policies.at(0);
    const PolicyReport& b = second.report.policies.at(0);
    EXPECT_EQ(a.name, GetParam());
    EXPECT_EQ(a.scans, b.scans);
    EXPECT_EQ(a.cpus_scanned.max, b.cpus_scanned.max);
    EXPECT_EQ(a.preferred_llc_changes, b.preferred_llc_changes);
    EXPECT_EQ(a.runtime_on_preferred_llc, b.runtime_on_preferred_llc);
    // Every executed scan is in the distributions, and bounded by the
    // machine.
    EXPECT_EQ(a.cpus_scanned.count, a.scans);
    EXPECT_EQ(a.scan_ns.count, a.scans);
    EXPECT_LE(a.cpus_scanned.max, c.topology->max_cpu() + 1);
    EXPECT_GE(a.runtime_on_preferred_llc, 0.0);
    EXPECT_LE(a.runtime_on_preferred_llc, 1.0);
    EXPECT_EQ(first.report.samples_applied, second.report.samples_applied);
  }
}

// Fields is what a preference says, comparable in one EXPECT_EQ.
std::tuple<int, int, NoPreferenceReason> Fields(const Preference& p) {
  return {p.llc, p.cpu, p.reason};
}
std::tuple<int, int, NoPreferenceReason> Fields(const PolicyDecision& d) {
  return {d.preferred_llc, d.preferred_cpu, d.reason};
}

// Driving a policy directly, as the engine does: what Account returns is
// CurrentPreference, and both say what Decide says. The process runs 2 ms
// at a time on LLC 1's CPUs 4-6 of a 1x2x4 grid, one jiffy apart (epochs
// of 2 jiffies), and is scanned every fourth step, so the cache-aware policies
// come to prefer LLC 1 (`kernel` only follows kernel decisions, so it
// never does here); with enable=off no policy prefers anything.
TEST_P(PolicyConformance, AccountAndCurrentPreferenceSayWhatDecideSays) {
  for (const Enable enable : {Enable::kOn, Enable::kOff}) {
    SCOPED_TRACE(enable == Enable::kOn ? "enable=on" : "enable=off");
    ModelTunables tunables;
    tunables.enable = enable;
    ModelContext context(test_support::MakeGrid({1, 2, 4}), tunables);
    context.Start(0);
    const PolicyFactory* factory =
        test_support::TestRegistry().Find(GetParam());
    ASSERT_NE(factory, nullptr);
    std::unique_ptr<Policy> policy = factory->Create(context, {});
    ProcessRef process{0, 10, 2, 0, 0};
    bool preferred = false;
    for (int step = 0; step < 40; ++step) {
      const int64_t now = step + 1;  // jiffies, as the engine passes them
      const ThreadRef thread{11 + step % 2, -1, 4 + step % 3};
      context.Advance(thread.cpu, now);
      const Preference accounted =
          policy->Account(process, thread, 2'000'000, now);
      context.mutable_rq(thread.cpu).cpu_runtime += 2'000'000;
      EXPECT_EQ(Fields(accounted), Fields(policy->CurrentPreference(0)))
          << "step " << step;
      if (step % 4 == 3) {
        process.epoch = context.rq(thread.cpu).cpu_epoch;
        policy->Scan(process, thread, now);
      }
      const Preference current = policy->CurrentPreference(0);
      EXPECT_EQ(Fields(current), Fields(policy->Decide(process, nullptr)))
          << "step " << step;
      EXPECT_EQ(current.llc < 0, current.reason != NoPreferenceReason::kNone);
      if (current.llc >= 0) {
        EXPECT_EQ(current.llc, context.llc_of(current.cpu));
        preferred = true;
      }
    }
    // `none` never prefers; `kernel` only after a kernel decision, which
    // this stream has none of.
    EXPECT_EQ(preferred, enable == Enable::kOn && GetParam() != "none" &&
                             GetParam() != "kernel");
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, PolicyConformance,
                         ::testing::ValuesIn(RegisteredNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(PolicyConformanceSetup, TheExamplePluginIsAmongThePoliciesRun) {
  const std::vector<std::string> names = RegisteredNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "llc-most-runtime"),
            names.end());
  EXPECT_EQ(names.size(), 5u);
}

}  // namespace
}  // namespace schedcache
