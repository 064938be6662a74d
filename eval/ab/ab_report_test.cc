// The AbResult <-> AbReport and SweepResult -> SweepReport converter, and
// `ab --json` and `sweep --json`, which are the messages in protobuf's JSON
// mapping: lowerCamelCase keys, 64-bit integers as strings, -1 for "no
// LLC", and an absent key (not null) for a figure with nothing behind it.
#include "eval/ab/ab_report.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/proto_json.h"
#include "eval/report/internal/example_report.h"
#include "eval/report/internal/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::ab {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// ExampleResult is the report tests' ExampleReport as the result it was
// converted from.
AbResult ExampleResult() {
  absl::StatusOr<AbResult> result =
      AbResultFromProto(report_internal::ExampleReport());
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : AbResult{};
}

std::string JsonOf(const AbResult& result) {
  std::ostringstream out;
  EXPECT_TRUE(WriteJson(AbResultToProto(result), out).ok());
  return out.str();
}

TEST(JsonReport, WritesPoliciesWithTheirReportAndHistogram) {
  const std::string json = JsonOf(ExampleResult());
  EXPECT_THAT(json, HasSubstr(R"("reference":"full-scan")"));
  EXPECT_THAT(
      json,
      HasSubstr(R"({"report":{"policy":"visited-scan","scans":"10",)"
                R"("scansSkipped":"5","scansAborted":"1",)"
                R"("scansSkippedDisabled":"0","cpusScanned":{"count":"10",)"
                R"("mean":3.6,"p50":"3","p99":"8","max":"8"},)"));
  EXPECT_THAT(json, HasSubstr(R"("decisions":"10","agreements":"9",)"
                              R"("preferredLlcChanges":"3",)"
                              R"("runtimeOnPreferredLlc":0.6875,)"));
  EXPECT_THAT(json, HasSubstr(R"("agreement":0.9},"cpusScannedHistogram":[)"
                              R"({"cpusScanned":"2","scans":"4"},)"
                              R"({"cpusScanned":"3","scans":"4"},)"
                              R"({"cpusScanned":"8","scans":"2"}])"));
}

// By hand (as in table_report_test): 1.201 s of CPU time; visited-scan
// scanned 36 CPUs (36 / 1.201 per CPU-s, 36 / 80 = 0.45 of full-scan's) in
// 5200 ns (5200 / 1.201e9 of the CPU time, 5200 / 15000 of full-scan's);
// the seed's 0.02 / 0.81 and 0.03 / 0.13. protobuf writes a double in 15
// significant digits when that reads back exactly, else in 17.
TEST(JsonReport, WritesCostBesideTheSeedsFigures) {
  const std::string json = JsonOf(ExampleResult());
  EXPECT_THAT(json, HasSubstr(R"("cpuTimeNs":"1201000000","cacheGroups":[]})"));
  EXPECT_THAT(json, HasSubstr(R"("cost":{"cpusScannedTotal":"36",)"
                              R"("scanNsTotal":5200,)"
                              R"("seed":{"cyclesPctNumaBalancingOff":0.02,)"
                              R"("vsFullScanNumaBalancingOff":0.024691358024691357,)"
                              R"("cyclesPctNumaBalancingOn":0.03,)"
                              R"("vsFullScanNumaBalancingOn":0.23076923076923075},)"
                              R"("cpusScannedPerCpuSecond":29.975020815986674,)"
                              R"("cpusScannedVsReference":0.45,)"
                              R"("scanTimeShare":4.3297252289758538e-06,)"
                              R"("scanTimeVsReference":0.34666666666666668})"));
}

// Nothing to divide by: the key is absent, never 0 or a 1.0x that was not
// measured; a policy the seed did not measure has no seed.
TEST(JsonReport, CostIsAbsentWhereNothingDivides) {
  AbResult result = ExampleResult();
  result.processes.clear();
  result.policies[0].report.name = "plugin";
  result.policies[0].report.cpus_scanned = {};
  result.policies[0].report.scan_ns = {};
  EXPECT_THAT(JsonOf(result),
              HasSubstr(R"("cost":{"cpusScannedTotal":"0","scanNsTotal":0}})"));
}

TEST(JsonReport, WritesInputSummary) {
  EXPECT_THAT(JsonOf(ExampleResult()),
              HasSubstr(R"("input":{"description":"workload:redis seed=1",)"
                        R"("topology":"1 package, 2 LLCs, 8 CPUs",)"
                        R"("topologySource":"builtin:test-8","samples":"1000",)"
                        R"("handovers":"200","malformedLines":"2",)"
                        R"("malformedExamples":["garbage line","bad, \"quoted\""],)"
                        R"("startNs":"2000000000","durationNs":"1000000000",)"
                        R"("hz":250,"kernelDecisions":"0",)"
                        R"("kernelDecisionsUnmatched":"0"})"));
}

TEST(JsonReport, WritesFinalPreferredLlcPerPolicyWithMinusOneForNone) {
  const std::string json = JsonOf(ExampleResult());
  // protobuf escapes '<' as \u003c.
  EXPECT_THAT(json, HasSubstr(R"({"tgid":200,"comm":"a\u003cb&c",)"
                              R"("runtimeNs":"300000000",)"
                              R"("finalPreferredLlc":[0,-1],)"
                              R"("preferredLlcOverTime":[{"changes":[)"
                              R"({"timestampNs":"2100000000","llc":0}]},)"
                              R"({"changes":[)"
                              R"({"timestampNs":"2100000000","llc":0},)"
                              R"({"timestampNs":"2900000000","llc":-1}]}],)"
                              R"("kernel":[]})"));
  // Processes outside the busiest have no time series at all.
  EXPECT_THAT(json, HasSubstr(R"("finalPreferredLlc":[-1,-1],)"
                              R"("preferredLlcOverTime":[],"kernel":[]})"));
}

// Python's json module is the independent judge that the output is JSON.
TEST(JsonReport, ParsesBackWithPython) {
  if (!std::ifstream("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is absent";
  AbResult result = ExampleResult();
  result.processes[2].comm = "tab\there \xC3\xA9 \x01";
  result.policies[1].report.agreement = 1.0 / 3.0;
  const std::string path = absl::StrCat(::testing::TempDir(), "/report.json");
  {
    std::ofstream out(path);
    ASSERT_TRUE(WriteJson(AbResultToProto(result), out).ok());
  }
  const std::string script =
      "import json,sys\n"
      "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
      "print(d['input']['samples'], d['input']['malformedLines'])\n"
      "print([p['report']['policy'] for p in d['policies']], "
      "d['policies'][0]['report']['scans'])\n"
      "print(repr(d['policies'][1]['report']['agreement'] == 1/3))\n"
      "print(d['policies'][1]['report']['cpusScanned'])\n"
      "print([(p['tgid'], p['comm'], p['finalPreferredLlc']) "
      "for p in d['processes']])\n";
  absl::StatusOr<std::string> printed = report_internal::RunCommand(
      absl::StrCat("/usr/bin/python3 -c \"$(cat <<'PY'\n", script, "PY\n)\" ", path));
  ASSERT_TRUE(printed.ok()) << printed.status();
  EXPECT_EQ(*printed,
            "1000 2\n"
            "['full-scan', 'visited-scan'] 10\n"
            "True\n"
            "{'count': '10', 'mean': 3.6, 'p50': '3', 'p99': '8', 'max': '8'}\n"
            "[(100, 'redis-server', [1, 1]), "
            "(200, 'a<b&c', [0, -1]), "
            "(300, 'tab\\there é \\x01', [-1, -1])]\n");
}

TEST(JsonReport, AgreementIsAbsentWithoutDecisions) {
  AbResult result = ExampleResult();
  result.policies[1].report.decisions = 0;
  result.policies[1].report.agreements = 0;
  result.policies[1].report.agreement = std::nullopt;
  EXPECT_THAT(JsonOf(result),
              HasSubstr(R"("decisions":"0","agreements":"0",)"
                        R"("preferredLlcChanges":"3",)"));
  EXPECT_THAT(JsonOf(result), Not(HasSubstr(R"("agreement":0.9)")));
}

// AbResult -> JSON -> AbResult: every value of ExampleResult comes back,
// so writing it again gives the same text.
TEST(AbResultFromProto, BringsBackWhatAbResultToProtoWrote) {
  AbResult sent = ExampleResult();
  sent.input.kernel_decisions = 7;
  sent.input.start_ns = 9'007'199'254'740'993;  // 2^53 + 1
  sent.processes[0].kernel = {{1, 2, 3}, {4, 5, 6}};
  sent.cache_groups = {{.id = 5,
                        .name = "pair",
                        .member_tgids = {100, 200},
                        .runtime_ns = 77,
                        .final_preferred_llc = {1, kNoPreferredLlc},
                        .runtime_on_preferred_llc_ns = {70, 0}}};
  v1::AbReport read;
  ASSERT_TRUE(MessageFromJson(JsonOf(sent), read).ok());
  absl::StatusOr<AbResult> back = AbResultFromProto(read);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->input.start_ns, 9'007'199'254'740'993);
  EXPECT_EQ(back->policies[1].report.name, "visited-scan");
  EXPECT_EQ(back->policies[1].report.agreement, 0.9);
  EXPECT_EQ(back->processes[1].final_preferred_llc[1], kNoPreferredLlc);
  EXPECT_EQ(back->processes[0].kernel[1].agreements, 6u);
  EXPECT_EQ(back->llcs[1].llc, 1);
  EXPECT_EQ(back->busiest_last_scan.per_policy[0][1].occupancy, 1048576u);
  ASSERT_EQ(back->cache_groups.size(), 1u);
  EXPECT_EQ(back->cache_groups[0].name, "pair");
  EXPECT_THAT(back->cache_groups[0].member_tgids, ElementsAre(100, 200));
  EXPECT_THAT(back->cache_groups[0].final_preferred_llc,
              ElementsAre(1, kNoPreferredLlc));
  EXPECT_THAT(back->cache_groups[0].runtime_on_preferred_llc_ns,
              ElementsAre(70, 0));
  EXPECT_THAT(JsonOf(sent), HasSubstr(R"("runtimeOnPreferredLlcNs":["70","0"])"));
  EXPECT_EQ(JsonOf(*back), JsonOf(sent));
}

// protobuf's JSON needs valid UTF-8: a byte that starts no UTF-8 sequence
// (a raw trace's comm may hold one) becomes U+FFFD (EF BF BD), one per
// byte; every valid sequence and control character stays as it is.
TEST(AbResultToProto, ReplacesInvalidUtf8WithTheReplacementCharacter) {
  AbResult result = ExampleResult();
  result.processes[0].comm = "bad\xFFname";
  EXPECT_EQ(AbResultToProto(result).processes(0).comm(), "bad\xEF\xBF\xBDname");
  // "é" is C3 A9, "𝄞" F0 9D 84 9E.
  result.processes[0].comm = "\xC3\xA9\xF0\x9D\x84\x9E\t\x01";
  EXPECT_EQ(AbResultToProto(result).processes(0).comm(),
            "\xC3\xA9\xF0\x9D\x84\x9E\t\x01");
  // A lone continuation byte, an overlong "/" (C0 AF), a truncated 3-byte
  // sequence at the end, and a UTF-16 surrogate (ED A0 80).
  result.processes[0].comm = "a\x80" "b\xC0\xAF" "c\xE2\x82";
  EXPECT_EQ(AbResultToProto(result).processes(0).comm(),
            "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD");
  result.processes[0].comm = "\xED\xA0\x80";
  EXPECT_EQ(AbResultToProto(result).processes(0).comm(),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(AbResultFromProto, RefusesPerPolicyListsOfAnotherLengthAndBadLlcs) {
  v1::AbReport report = AbResultToProto(ExampleResult());
  report.mutable_processes(1)->mutable_final_preferred_llc()->RemoveLast();
  EXPECT_THAT(AbResultFromProto(report).status().message(),
              HasSubstr("processes[tgid=200].final_preferred_llc has 1 "
                        "entries, want one per policy (2)"));
  report = AbResultToProto(ExampleResult());
  report.mutable_processes(1)->set_final_preferred_llc(1, -2);
  EXPECT_THAT(AbResultFromProto(report).status().message(),
              HasSubstr("processes[1].finalPreferredLlc[1]: -2 is not an LLC "
                        "id (>= 0) nor -1 (no LLC)"));
  EXPECT_THAT(AbResultFromProto(v1::AbReport()).status().message(),
              HasSubstr("AbReport.policies is empty"));
}

// ExampleSweep's values as a sweep: its rows are ExampleResult's input and
// policies, so SweepResultToProto gives ExampleSweep back (with the
// reference, which it derives), and a failure keeps its values and error.
SweepResult ExampleSweepResult() {
  SweepResult sweep;
  sweep.input = "workload:hackbench";
  sweep.axes = {{"affinity_timeout_epochs", {"1", "5", "9"}}};
  AbResult second = ExampleResult();
  second.policies[1].report.agreement.reset();
  sweep.rows = {{{"1"}, ExampleResult()}, {{"5"}, second}};
  sweep.failures = {{{"9"}, "bad \xFF value"}};
  return sweep;
}

TEST(SweepResultToProto, HoldsEachRowsInputAndPolicies) {
  const v1::SweepReport report = SweepResultToProto(ExampleSweepResult());
  v1::SweepReport want = report_internal::ExampleSweep();
  want.mutable_axes(0)->add_values("9");
  v1::SweepFailure& failure = *want.add_failures();
  failure.add_values("9");
  failure.set_error("bad \xEF\xBF\xBD value");
  want.set_reference("full-scan");
  EXPECT_EQ(report.SerializeAsString(), want.SerializeAsString())
      << report.DebugString();
}

// sweep --json: a row per combination with its values in the axes' order,
// its input and each policy's statistics as in `ab --json`, agreement
// absent where there were no decisions.
TEST(SweepJson, IsTheMessageInProtobufsJsonMapping) {
  std::ostringstream out;
  ASSERT_TRUE(
      WriteSweepJson(SweepResultToProto(ExampleSweepResult()), out).ok());
  const std::string json = out.str();
  EXPECT_THAT(json, HasSubstr(R"({"input":"workload:hackbench","axes":[)"
                              R"({"key":"affinity_timeout_epochs",)"
                              R"("values":["1","5","9"]}],"rows":[)"
                              R"({"values":["1"],"input":{"description":)"
                              R"("workload:redis seed=1",)"));
  EXPECT_THAT(json, HasSubstr(R"({"values":["5"],"input":{)"));
  EXPECT_THAT(json, HasSubstr(R"("policies":[{"policy":"full-scan","scans":"10",)"));
  EXPECT_THAT(json, HasSubstr(R"("decisions":"10","agreements":"9",)"
                              R"("preferredLlcChanges":"3",)"
                              R"("runtimeOnPreferredLlc":0.6875,)"
                              R"("kernelDecisions":"0","kernelScans":"0",)"
                              R"("kernelAgreements":"0",)"
                              R"("kernelProcessScans":"0"}]}],)"));
  EXPECT_THAT(json, HasSubstr(R"("failures":[{"values":["9"],"error":"bad )"));
  EXPECT_THAT(json, HasSubstr(R"("reference":"full-scan"})"));
  v1::SweepReport back;
  ASSERT_TRUE(MessageFromJson(json, back).ok());
  EXPECT_EQ(back.failures(0).error(), "bad \xEF\xBF\xBD value");
  EXPECT_EQ(back.rows(1).policies(1).has_agreement(), false);
  EXPECT_EQ(back.rows(0).policies(1).agreement(), 0.9);
}

TEST(SweepJson, RefusesAFailureWhoseValuesDoNotMatchTheAxes) {
  SweepResult sweep = ExampleSweepResult();
  sweep.failures[0].values = {"9", "extra"};
  std::ostringstream out;
  const absl::Status status = WriteSweepJson(SweepResultToProto(sweep), out);
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("failures[0] has 2 values for 1 axes"));
}

}  // namespace
}  // namespace schedcache::ab
