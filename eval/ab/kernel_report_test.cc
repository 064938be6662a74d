// Kernel decisions through an in-process A/B session into every report
// form: the text table's "at kernel scans" group, CSV, JSON (per policy and
// per process), and a shard file and ab-merge that keep and sum them.
// No input format carries decisions yet, so the session is fed directly.
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eval/ab/ab_collector.h"
#include "eval/ab/ab_merge.h"
#include "eval/ab/event_feed.h"
#include "eval/ab/in_process_session.h"
#include "eval/ab/shard_result.h"
#include "eval/ab/ab_report.h"
#include "eval/report/table_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "topology/topology_source.h"

namespace schedcache::ab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kJ = 4'000'000;  // one jiffy (HZ 250, the default)
constexpr int64_t kP = 2 * kJ;     // one epoch (HZ / 100 jiffies)

Sample Tick(int64_t ts) {
  Sample s;
  s.timestamp_ns = ts;
  s.tgid = 10;
  s.tid = 1;
  s.delta_ns = 1000;
  s.tick = true;
  s.comm = Comm("worker");
  return s;
}

KernelDecision Decision(int64_t ts, int32_t tgid, int preferred_cpu,
                        bool scanned) {
  KernelDecision d;
  d.timestamp_ns = ts;
  d.tgid = tgid;
  d.tid = 1;
  d.preferred_cpu = preferred_cpu;
  d.scanned = scanned;
  return d;
}

// RunKernelStream runs kernel and full-scan on 2 LLCs of 4 CPUs (LLC 0:
// CPUs 0-3) over policies/kernel_agreement_test.cc's stream, all on CPU 0:
// full-scan scans at t = J (jiffy 1, epoch 1) and P + J (jiffy 3, epoch 2)
// and prefers LLC 0; the kernel scans preferring CPU 0 (LLC 0) at t = J,
// CPU 6 (LLC 1) at P + J and none at P + J + 2, and decides without
// scanning at t = 2J + 1; process 99's decision is
// unmatched. So: 5 decisions, 1 unmatched; full-scan 3 kernel scans, 2 own,
// 1 agreement (33.33%); kernel 3, 3, 3 (100%).
AbResult RunKernelStream() {
  static const PolicyRegistry& registry = *new PolicyRegistry(
      *BuildPolicyRegistry({}));
  absl::StatusOr<Topology> topology =
      LoadTopology("synthetic:pack:1 l3:2 core:4 pu:1");
  EXPECT_TRUE(topology.ok()) << topology.status();
  const std::vector<std::string> policies = {"kernel", "full-scan"};
  AbCollector collector(policies, 8, nullptr, nullptr);
  client::SessionSpec spec;
  spec.policies = policies;
  absl::StatusOr<std::unique_ptr<AbSession>> session = MakeInProcessSession(
      std::make_shared<const Topology>(*std::move(topology)), spec, registry,
      collector);
  EXPECT_TRUE(session.ok()) << session.status();
  const std::function<void(const AbProgress&)> no_progress;
  EventFeed feed(collector, nullptr, **session, no_progress, nullptr,
                 /*jobs=*/1);
  Sample first = Tick(0);
  first.nr_threads = 2;
  EXPECT_TRUE(feed.OnSample(first).ok());
  EXPECT_TRUE(feed.OnSample(Tick(kJ)).ok());
  EXPECT_TRUE(feed.OnKernelDecision(Decision(kJ, 10, 0, true)).ok());
  EXPECT_TRUE(feed.OnSample(Tick(2 * kJ)).ok());
  EXPECT_TRUE(feed.OnKernelDecision(Decision(2 * kJ + 1, 10, 5, false)).ok());
  EXPECT_TRUE(feed.OnSample(Tick(kP + kJ)).ok());
  EXPECT_TRUE(feed.OnKernelDecision(Decision(kP + kJ, 10, 6, true)).ok());
  EXPECT_TRUE(feed.OnKernelDecision(Decision(kP + kJ + 1, 99, 4, true)).ok());
  EXPECT_TRUE(feed.OnKernelDecision(Decision(kP + kJ + 2, 10, -1, true)).ok());
  AbInput input;
  input.description = "kernel stream";
  absl::StatusOr<EngineReport> report = feed.Finish(input);
  EXPECT_TRUE(report.ok()) << report.status();
  return collector.Build(*report, input, true);
}

TEST(KernelReport, TheResultCarriesTheKernelFiguresPerPolicyAndProcess) {
  const AbResult result = RunKernelStream();
  EXPECT_EQ(result.input.kernel_decisions, 5u);
  EXPECT_EQ(result.input.kernel_decisions_unmatched, 1u);
  ASSERT_EQ(result.policies.size(), 2u);
  EXPECT_EQ(result.policies[0].report.scans, 3u);  // the kernel's
  EXPECT_EQ(result.policies[1].report.kernel_scans, 3u);
  EXPECT_EQ(result.policies[1].report.kernel_process_scans, 2u);
  EXPECT_EQ(result.policies[1].report.kernel_agreements, 1u);
  ASSERT_EQ(result.processes.size(), 1u);
  ASSERT_EQ(result.processes[0].kernel.size(), 2u);
  EXPECT_EQ(result.processes[0].kernel[1].kernel_scans, 3u);
  EXPECT_EQ(result.processes[0].kernel[1].scans, 2u);
  EXPECT_EQ(result.processes[0].kernel[1].agreements, 1u);
}

TEST(KernelReport, TextAndCsvShowTheAtKernelScansGroup) {
  const AbResult result = RunKernelStream();
  std::ostringstream text;
  ASSERT_TRUE(WriteTextReport(AbResultToProto(result), text).ok());
  EXPECT_THAT(text.str(),
              HasSubstr("kernel:    5 decisions, 1 of them for untracked "
                        "processes"));
  // `kernel` is the reference: "vs kernel" is its group, at the model's
  // triggers; the kernel's own scans have a group of their own.
  EXPECT_THAT(text.str(), HasSubstr("vs kernel"));
  EXPECT_THAT(text.str(), HasSubstr("at kernel scans"));
  EXPECT_THAT(text.str(), HasSubstr("kernel  own  agree(%)"));
  std::ostringstream csv;
  ASSERT_TRUE(WriteCsv(AbResultToProto(result), csv).ok());
  EXPECT_THAT(csv.str(), HasSubstr(",kernel_scans,kernel_process_scans,"
                                   "kernel_agreement_pct,"));
  // Columns: ..., kernel, own, agree(%), then the cost table's.
  EXPECT_THAT(csv.str(), HasSubstr("\nkernel,"));
  EXPECT_THAT(csv.str(), HasSubstr(",3,3,100.00,"));
  EXPECT_THAT(csv.str(), HasSubstr(",3,2,33.33,"));
}

// The text forms show no kernel figures; the JSON, being the message with
// every scalar written, shows them as zeros and no process has kernel
// counts.
TEST(KernelReport, WithoutDecisionsNoFormShowsKernelFigures) {
  AbResult result = RunKernelStream();
  result.input.kernel_decisions = 0;
  for (ProcessResult& process : result.processes) process.kernel.clear();
  std::ostringstream text, json;
  ASSERT_TRUE(WriteTextReport(AbResultToProto(result), text).ok());
  ASSERT_TRUE(WriteJson(AbResultToProto(result), json).ok());
  EXPECT_THAT(text.str(), Not(HasSubstr("kernel:")));
  EXPECT_THAT(text.str(), Not(HasSubstr("at kernel scans")));
  EXPECT_THAT(json.str(), HasSubstr(R"("kernelDecisions":"0",)"));
  EXPECT_THAT(json.str(), Not(HasSubstr(R"("kernel":[{)")));
}

// Per process, one entry per policy in the report's order (kernel, then
// full-scan).
TEST(KernelReport, JsonHasThemPerPolicyAndPerProcess) {
  const AbResult result = RunKernelStream();
  std::ostringstream json;
  ASSERT_TRUE(WriteJson(AbResultToProto(result), json).ok());
  EXPECT_THAT(json.str(), HasSubstr(R"("kernelDecisions":"5",)"
                                    R"("kernelDecisionsUnmatched":"1")"));
  EXPECT_THAT(json.str(), HasSubstr(R"("kernelDecisions":"4",)"
                                    R"("kernelScans":"3",)"
                                    R"("kernelAgreements":"1",)"));
  EXPECT_THAT(json.str(),
              HasSubstr(R"("kernel":[{"kernelScans":"3","scans":"3",)"
                        R"("agreements":"3"},{"kernelScans":"3",)"
                        R"("scans":"2","agreements":"1"}])"));
}

TEST(KernelReport, AShardFileKeepsThemAndMergeSumsThem) {
  ShardResult shard;
  shard.config = {.topology = "synthetic:pack:1 l3:2 core:4 pu:1",
                  .policies = {"kernel", "full-scan"},
                  .trigger = "tick",
                  .settings = {},
                  .hz = 250,
                  .cpu_map = "",
                  .workload = ""};
  shard.entries = 1;
  shard.inputs = {{0, "kernel stream"}};
  shard.results.emplace_back(0, RunKernelStream());
  const std::string path = ::testing::TempDir() + "/kernel-shard.json";
  ASSERT_TRUE(WriteShardResult(shard, path).ok());
  absl::StatusOr<ShardResult> back = ReadShardResult(path);
  ASSERT_TRUE(back.ok()) << back.status();
  const AbResult& read = back->results[0].second;
  std::ostringstream written, reread;
  ASSERT_TRUE(WriteJson(AbResultToProto(shard.results[0].second), written).ok());
  ASSERT_TRUE(WriteJson(AbResultToProto(read), reread).ok());
  EXPECT_EQ(reread.str(), written.str());

  absl::StatusOr<AbResult> merged = MergeAbResults({read, read});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->input.kernel_decisions, 10u);
  EXPECT_EQ(merged->input.kernel_decisions_unmatched, 2u);
  const PolicyReport& full_scan = merged->policies[1].report;
  EXPECT_EQ(full_scan.kernel_scans, 6u);
  EXPECT_EQ(full_scan.kernel_agreements, 2u);
  EXPECT_DOUBLE_EQ(*full_scan.kernel_agreement, 1.0 / 3.0);
  EXPECT_EQ(full_scan.kernel_process_scans, 4u);
  ASSERT_EQ(merged->processes.size(), 2u);
  EXPECT_EQ(merged->processes[1].kernel[1].scans, 2u);
}

}  // namespace
}  // namespace schedcache::ab
