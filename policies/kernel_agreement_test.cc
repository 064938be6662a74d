// Kernel decisions in the engine: the `kernel` policy follows them, every
// policy's agreement with the kernel is taken at the kernel's scans
// (docs/MODEL.md), decisions of untracked processes are counted, and bad
// fields are refused by name.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/engine.h"
#include "policies/testing/engine_harness.h"

namespace schedcache {
namespace {

using test_support::GridShape;
using test_support::MakeGrid;
using test_support::MustMakeEngine;
using test_support::SampleAt;
using ::testing::HasSubstr;

constexpr int64_t kJ = 4'000'000;  // one jiffy (HZ 250, the default)
constexpr int64_t kP = 2 * kJ;     // one epoch (HZ / 100 jiffies)

// Decision is a kernel decision of thread 1 of process `tgid` on CPU 0.
KernelDecision Decision(int64_t ts, int32_t tgid, int32_t preferred_cpu,
                        bool scanned) {
  KernelDecision d;
  d.timestamp_ns = ts;
  d.cpu = 0;
  d.tgid = tgid;
  d.tid = 1;
  d.preferred_cpu = preferred_cpu;
  d.scanned = scanned;
  return d;
}

const PolicyReport& ReportOf(const EngineReport& report,
                             const std::string& name) {
  for (const PolicyReport& policy : report.policies) {
    if (policy.name == name) return policy;
  }
  ADD_FAILURE() << "no policy " << name;
  return report.policies.front();
}

// The stream on the 1 node x 2 LLCs x 4 CPUs grid (LLC 0: CPUs 0-3, LLC 1:
// CPUs 4-7). As in model_rules_test's ANoneReferenceDecidesAtEveryTrigger,
// full-scan executes at the ticks at t = J (jiffy 1, epoch 1 > 0; next_scan
// jiffy 3) and t = P + J (jiffy 3, epoch 2, the gate open) and prefers
// LLC 0 (CPU 0 holds all the runtime) after both; the tick at t = 2J
// (jiffy 2, still epoch 1) triggers nothing. The kernel:
//   t = J          pref CPU 0 (LLC 0), scanned: full-scan agrees
//   t = 2J + 1     pref CPU 5 (LLC 1), not a scan: not counted
//   t = P + J      pref CPU 6 (LLC 1), scanned: full-scan (LLC 0) disagrees
//   t = P + J + 1  process 99, never sampled: unmatched
//   t = P + J + 2  pref -1, scanned: full-scan (LLC 0) disagrees
// So for every policy 4 matched decisions and 3 kernel scans; full-scan
// agrees at 1 of 3 and made 2 scans; `kernel` agrees at 3 of 3 and its
// scans are the kernel's 3.
std::vector<Event> Stream() {
  return {
      SampleAt(0, 0, 10, 1, 1000, true, 2),
      SampleAt(kJ, 0, 10, 1, 1000, true),
      Decision(kJ, 10, 0, true),
      SampleAt(2 * kJ, 0, 10, 1, 1000, true),
      Decision(2 * kJ + 1, 10, 5, false),
      SampleAt(kP + kJ, 0, 10, 1, 1000, true),
      Decision(kP + kJ, 10, 6, true),
      Decision(kP + kJ + 1, 99, 4, true),
      Decision(kP + kJ + 2, 10, -1, true),
  };
}

EngineReport ApplyAll(Engine& engine, const std::vector<Event>& events) {
  const uint64_t applied =
      engine.ApplyBatch(events, [](size_t index, const absl::Status& error) {
        ADD_FAILURE() << "event " << index << ": " << error;
      });
  EXPECT_EQ(applied, events.size());
  return engine.Report();
}

class KernelAgreement
    : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(KernelAgreement, CountsAtTheKernelsScansWhicheverPolicyIsFirst) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, GetParam());
  ASSERT_NE(engine, nullptr);
  const EngineReport report = ApplyAll(*engine, Stream());
  EXPECT_EQ(report.kernel_decisions_applied, 5u);
  EXPECT_EQ(report.kernel_decisions_unmatched, 1u);

  const PolicyReport& full = ReportOf(report, "full-scan");
  EXPECT_EQ(full.kernel_decisions, 4u);
  EXPECT_EQ(full.kernel_scans, 3u);
  EXPECT_EQ(full.kernel_agreements, 1u);
  EXPECT_DOUBLE_EQ(*full.kernel_agreement, 1.0 / 3.0);
  EXPECT_EQ(full.scans, 2u);
  EXPECT_EQ(full.kernel_process_scans, 2u);

  const PolicyReport& kernel = ReportOf(report, "kernel");
  EXPECT_EQ(kernel.kernel_scans, 3u);
  EXPECT_EQ(kernel.kernel_agreements, 3u);
  EXPECT_EQ(kernel.kernel_agreement, 1.0);
  EXPECT_EQ(kernel.scans, 3u);
  EXPECT_EQ(kernel.kernel_process_scans, 3u);
  EXPECT_EQ(kernel.cpus_scanned.count, 0u);  // it never scans a CPU
  // -1 -> LLC 0 -> LLC 1 -> -1.
  EXPECT_EQ(kernel.preferred_llc_changes, 3u);

  ASSERT_EQ(report.kernel_processes.size(), 1u);
  const KernelProcessReport& process = report.kernel_processes[0];
  EXPECT_EQ(process.tgid, 10);
  const std::vector<std::string> names = engine->policy_names();
  for (size_t i = 0; i < names.size(); ++i) {
    const bool is_kernel = names[i] == "kernel";
    EXPECT_EQ(process.policies[i].kernel_scans, 3u) << names[i];
    EXPECT_EQ(process.policies[i].scans, is_kernel ? 3u : 2u) << names[i];
    EXPECT_EQ(process.policies[i].agreements, is_kernel ? 3u : 1u) << names[i];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Orders, KernelAgreement,
    ::testing::Values(std::vector<std::string>{"kernel", "full-scan"},
                      std::vector<std::string>{"full-scan", "kernel"}));

TEST(KernelPolicy, PrefersTheLlcOfTheKernelsLastPreferredCpu) {
  auto engine =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"kernel", "none"});
  ASSERT_NE(engine, nullptr);
  std::vector<PreferenceChange> changes;
  engine->SetChangeListener(
      [&](const PreferenceChange& change) { changes.push_back(change); });
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 2)).ok());
  RecommendRequest request;
  request.tgid = 10;
  EXPECT_EQ((*engine->Recommend(request))[0].reason,
            NoPreferenceReason::kNoData);

  ASSERT_TRUE(engine->ApplyKernelDecision(Decision(5, 10, 6, true)).ok());
  const std::vector<PolicyDecision> after = *engine->Recommend(request);
  EXPECT_EQ(after[0].preferred_cpu, 6);
  EXPECT_EQ(after[0].preferred_llc, 1);
  EXPECT_EQ(after[0].reason, NoPreferenceReason::kNone);

  ASSERT_TRUE(engine->ApplyKernelDecision(Decision(6, 10, -1, false)).ok());
  EXPECT_EQ((*engine->Recommend(request))[0].reason,
            NoPreferenceReason::kKernelNone);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].new_llc, 1);
  EXPECT_EQ(changes[0].new_cpu, 6);
  EXPECT_EQ(changes[1].new_llc, -1);
  EXPECT_EQ(changes[1].reason, NoPreferenceReason::kKernelNone);
  // Its scans are the kernel's: one decision with `scanned`.
  EXPECT_EQ(engine->Report().policies[0].scans, 1u);
}

// The kernel policy keeps decisions by the kernel's group (docs/MODEL.md,
// Cache groups). Processes 10 and 20 are each their own group in the
// model, but the kernel shares group 0xa between them (as one mm shared
// without CLONE_THREAD, or the prctl RFC's SHARE_FROM, would):
//   t = 5  10 in 0xa prefers CPU 6 (LLC 1)
//   t = 6  20 in 0xa prefers CPU 6: 20 now names 0xa too
//   t = 7  10 in 0xa prefers CPU 1 (LLC 0): 0xa's state, so 20's too,
//          with no decision naming 20
//   t = 8  10 in a new group 0xb prefers CPU 5: 20 keeps 0xa's CPU 1
TEST(KernelPolicy, KeepsDecisionsByTheKernelsGroup) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"kernel"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(0, 0, 10, 1, 1000, true, 2)).ok());
  ASSERT_TRUE(engine->ApplySample(SampleAt(1, 1, 20, 2, 1000, true, 2)).ok());
  auto decide = [&](int64_t ts, int32_t tgid, int32_t cpu, uint64_t group) {
    KernelDecision d = Decision(ts, tgid, cpu, true);
    d.tid = tgid == 10 ? 1 : 2;
    d.group = group;
    ASSERT_TRUE(engine->ApplyKernelDecision(d).ok());
  };
  auto preferred_cpu_of = [&](int32_t tgid) {
    RecommendRequest request;
    request.tgid = tgid;
    return (*engine->Recommend(request))[0].preferred_cpu;
  };
  decide(5, 10, 6, 0xa);
  decide(6, 20, 6, 0xa);
  decide(7, 10, 1, 0xa);
  EXPECT_EQ(preferred_cpu_of(20), 1);
  decide(8, 10, 5, 0xb);
  EXPECT_EQ(preferred_cpu_of(10), 5);
  EXPECT_EQ(preferred_cpu_of(20), 1);
}

TEST(KernelPolicy, DecisionsOfUntrackedProcessesStartNothing) {
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"kernel"});
  ASSERT_NE(engine, nullptr);
  // Before any sample, and for a process known only from a hand-over.
  ASSERT_TRUE(engine->ApplyKernelDecision(Decision(1, 10, 4, true)).ok());
  ASSERT_TRUE(engine->ApplyHandOver(HandOver{2, 1, 20, 1}).ok());
  KernelDecision handed_over = Decision(3, 20, 4, true);
  handed_over.cpu = 1;
  ASSERT_TRUE(engine->ApplyKernelDecision(handed_over).ok());
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.kernel_decisions_applied, 2u);
  EXPECT_EQ(report.kernel_decisions_unmatched, 2u);
  EXPECT_EQ(report.processes_tracked, 0u);
  EXPECT_EQ(report.policies[0].kernel_decisions, 0u);
  EXPECT_EQ(report.policies[0].scans, 0u);
  EXPECT_TRUE(report.kernel_processes.empty());
  EXPECT_EQ(engine->now(), 3);  // the clock moved all the same
}

TEST(KernelPolicy, RejectsBadFieldsByNameAndLeavesTheEngineUnchanged) {
  auto engine =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"full-scan", "kernel"});
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ApplySample(SampleAt(100, 0, 10, 1, 1000, true, 2)).ok());
  KernelDecision bad_cpu = Decision(200, 10, 0, true);
  bad_cpu.cpu = 99;
  EXPECT_THAT(engine->ApplyKernelDecision(bad_cpu).message(),
              HasSubstr("cpu 99"));
  EXPECT_THAT(engine->ApplyKernelDecision(Decision(200, 0, 0, true)).message(),
              HasSubstr("tgid 0 must be > 0"));
  KernelDecision bad_tid = Decision(200, 10, 0, true);
  bad_tid.tid = -4;
  EXPECT_THAT(engine->ApplyKernelDecision(bad_tid).message(),
              HasSubstr("tid -4 must be > 0"));
  EXPECT_THAT(engine->ApplyKernelDecision(Decision(200, 10, 8, true)).message(),
              HasSubstr("preferred_cpu 8 must be -1 or a CPU of topology"));
  EXPECT_THAT(engine->ApplyKernelDecision(Decision(200, 10, -2, true)).message(),
              HasSubstr("preferred_cpu -2"));
  EXPECT_THAT(engine->ApplyKernelDecision(Decision(99, 10, 0, true)).message(),
              HasSubstr("timestamp_ns 99 is before cpu 0"));
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.kernel_decisions_applied, 0u);
  EXPECT_EQ(report.policies[1].preferred_llc_changes, 0u);
  EXPECT_EQ(engine->now(), 100);
}

TEST(KernelPolicy, ApplyBatchTakesDecisionsAmongTheOtherEvents) {
  auto engine =
      MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"full-scan", "kernel"});
  ASSERT_NE(engine, nullptr);
  std::vector<Event> events = Stream();
  events.push_back(HandOver{kP + kJ + 4, 1, 10, 2});
  events.push_back(Decision(kP + kJ + 5, 0, 1, true));  // tgid 0: refused
  events.push_back(ProcessExit{kP + kJ + 6, 10});
  std::vector<std::pair<size_t, std::string>> rejected;
  const uint64_t applied = engine->ApplyBatch(
      events, [&](size_t index, const absl::Status& error) {
        rejected.emplace_back(index, std::string(error.message()));
      });
  EXPECT_EQ(applied, events.size() - 1);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].first, events.size() - 2);
  EXPECT_THAT(rejected[0].second, HasSubstr("tgid 0"));
  // The process exited, yet its figures stay in the report.
  const EngineReport report = engine->Report();
  EXPECT_EQ(report.processes_tracked, 0u);
  EXPECT_EQ(report.exits_applied, 1u);
  EXPECT_EQ(report.policies[0].kernel_agreements, 1u);
  ASSERT_EQ(report.kernel_processes.size(), 1u);
  EXPECT_EQ(report.kernel_processes[0].tgid, 10);
  EXPECT_EQ(report.kernel_processes[0].policies[0].scans, 2u);
}

TEST(KernelPolicy, ScansBeforeTheFirstDecisionCountForTheProcess) {
  // full-scan scans at t = J (jiffy 1, epoch 1) and t = P + J (jiffy 3,
  // epoch 2, next_scan jiffy 3 reached); the kernel's first decision comes
  // after both, so both count toward kernel_process_scans.
  auto engine = MustMakeEngine(MakeGrid(GridShape{1, 2, 4}), {}, {"full-scan"});
  ASSERT_NE(engine, nullptr);
  std::vector<Event> events = {
      SampleAt(0, 0, 10, 1, 1000, true, 2),
      SampleAt(kJ, 0, 10, 1, 1000, true),
      SampleAt(kP + kJ, 0, 10, 1, 1000, true),
      Decision(kP + kJ + 1, 10, 1, true),
  };
  const EngineReport report = ApplyAll(*engine, events);
  EXPECT_EQ(report.policies[0].kernel_process_scans, 2u);
  EXPECT_EQ(report.policies[0].kernel_agreements, 1u);
}

}  // namespace
}  // namespace schedcache
