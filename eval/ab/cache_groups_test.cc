// `ab --group-by` (cache_groups.h): the rules, the group file's grammar and
// each of its errors, the transform's ids through a recording sink, and
// RunAb handing the grouped samples to the session (tgid: the report of a
// run without the flag).
#include "eval/ab/cache_groups.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "eval/ab/ab_runner.h"
#include "eval/ab/in_process_session.h"
#include "eval/ab/testing/comparable_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/builtin_policies.h"
#include "trace/line_reader.h"

namespace schedcache::ab {
namespace {

// ScratchPath is `file` in the test's temporary directory, prefixed with
// the running test's name: ctest runs the tests of this binary as parallel
// processes, which must not write one another's inputs.
std::string ScratchPath(std::string_view file) {
  return (std::filesystem::path(::testing::TempDir()) /
          (std::string(::testing::UnitTest::GetInstance()
                           ->current_test_info()
                           ->name()) +
           "-" + std::string(file)))
      .string();
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Grouped is one sample as the next sink saw it: its process and group.
using Grouped = std::pair<int32_t, uint64_t>;

// RecordingSink keeps every sample's (tgid, cache_group) and counts the
// other events it is passed.
class RecordingSink : public EventSink {
 public:
  absl::Status OnSample(const Sample& sample) override {
    samples.emplace_back(sample.tgid, sample.cache_group);
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver&) override {
    ++others;
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit&) override {
    ++others;
    return absl::OkStatus();
  }
  absl::Status OnProcessStart(const ProcessStart&) override {
    ++others;
    return absl::OkStatus();
  }
  void OnInputLine(int64_t line) override { last_line = line; }

  std::vector<Grouped> samples;
  int others = 0;
  int64_t last_line = 0;
};

Sample Named(int32_t tgid, int32_t tid, absl::string_view comm,
             uint64_t cache_group = kOwnCacheGroup) {
  Sample sample;
  sample.tgid = tgid;
  sample.tid = tid;
  sample.delta_ns = 1000;
  sample.comm.Assign(std::string_view(comm.data(), comm.size()));
  sample.cache_group = cache_group;
  return sample;
}

absl::StatusOr<GroupFile> FileOf(absl::string_view text) {
  LineReader lines = LineReader::FromText(
      std::string_view(text.data(), text.size()), "groups.txt");
  return ParseGroupFile(lines);
}

GroupBy FileRule(absl::string_view text) {
  absl::StatusOr<GroupFile> file = FileOf(text);
  EXPECT_TRUE(file.ok()) << file.status();
  GroupBy rule;
  rule.kind = GroupBy::Kind::kFile;
  rule.text = "file:groups.txt";
  rule.file = std::make_shared<const GroupFile>(
      file.ok() ? *std::move(file) : GroupFile{});
  return rule;
}

std::string FileError(absl::string_view text) {
  absl::StatusOr<GroupFile> file = FileOf(text);
  EXPECT_TRUE(absl::IsInvalidArgument(file.status())) << file.status();
  return std::string(file.status().message());
}

TEST(ParseGroupBy, ReadsTheRules) {
  EXPECT_EQ(ParseGroupBy("tgid")->kind, GroupBy::Kind::kTgid);
  EXPECT_EQ(ParseGroupBy("comm")->kind, GroupBy::Kind::kComm);
  EXPECT_EQ(ParseGroupBy("cgroup")->kind, GroupBy::Kind::kCgroup);
  EXPECT_TRUE(NeedsCgroupPaths(*ParseGroupBy("cgroup")));
  EXPECT_FALSE(NeedsCgroupPaths(*ParseGroupBy("comm")));
  EXPECT_FALSE(NeedsCgroupPaths(FileRule("a 1\nb comm=x\n")));
  EXPECT_TRUE(NeedsCgroupPaths(FileRule("a 1\nb cgroup=/x\n")));
  EXPECT_EQ(ParseGroupBy("pid").status().message(),
            "\"pid\" is not tgid, comm, cgroup or file:PATH");
  EXPECT_EQ(ParseGroupBy("file:").status().message(),
            "\"file:\" is not tgid, comm, cgroup or file:PATH");
  const absl::Status missing =
      ParseGroupBy("file:/nonexistent/groups.txt").status();
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), HasSubstr("/nonexistent/groups.txt"));
}

TEST(ParseGroupBy, ReadsTheFileItNames) {
  const std::string path =
      ScratchPath("pairs.txt");
  std::ofstream(path) << "pair 10\npair comm=valkey-benchmar\n";
  absl::StatusOr<GroupBy> rule = ParseGroupBy("file:" + path);
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->kind, GroupBy::Kind::kFile);
  EXPECT_EQ(rule->text, "file:" + path);
  EXPECT_THAT(rule->file->names, ElementsAre("pair"));
}

TEST(ParseGroupFile, NumbersGroupsInOrderOfFirstAppearance) {
  absl::StatusOr<GroupFile> file = FileOf(
      "# redis with its client, by pid and by name\n"
      "\n"
      "pair-a 4242\r\n"
      "   # an indented comment\n"
      "solo tgid=7\n"
      "pair-a\tcomm=valkey-benchmar\n"
      "spaced comm=srv io  \n"
      "pair-a 4242\n"  // the same line again: the same group, no error
      "spaced cgroup=/system.slice/my app.service \n");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->names, ElementsAre("pair-a", "solo", "spaced"));
  EXPECT_EQ(file->by_tgid.at(4242).group, 1u);
  EXPECT_EQ(file->by_tgid.at(4242).line, 3);
  EXPECT_EQ(file->by_tgid.at(7).group, 2u);
  EXPECT_EQ(file->by_comm.at("valkey-benchmar").group, 1u);
  // A comm keeps its inner blanks; the line's surrounding ones go.
  EXPECT_EQ(file->by_comm.at("srv io").group, 3u);
  EXPECT_EQ(file->by_comm.at("srv io").line, 7);
  // So does a cgroup path.
  EXPECT_EQ(file->by_cgroup.at("/system.slice/my app.service").group, 3u);
  EXPECT_EQ(file->by_cgroup.at("/system.slice/my app.service").line, 9);
}

TEST(ParseGroupFile, EachMalformedLineNamesFileLineAndValue) {
  EXPECT_EQ(FileError("ok 1\nlonely\n"),
            "groups.txt:2: group \"lonely\" names no process: want GROUP "
            "tgid=N, GROUP N, GROUP comm=NAME or GROUP cgroup=PATH");
  EXPECT_EQ(FileError("g tgid=x\n"),
            "groups.txt:1: \"tgid=x\" is not tgid=N or N (a process id, "
            "1..2147483647), comm=NAME or cgroup=PATH");
  EXPECT_EQ(FileError("g 0\n"),
            "groups.txt:1: \"0\" is not tgid=N or N (a process id, "
            "1..2147483647), comm=NAME or cgroup=PATH");
  EXPECT_THAT(FileError("g 2147483648\n"),
              HasSubstr("groups.txt:1: \"2147483648\" is not tgid=N"));
  EXPECT_THAT(FileError("g +5\n"), HasSubstr("groups.txt:1: \"+5\" is not"));
  EXPECT_THAT(FileError("g pid=5\n"), HasSubstr("groups.txt:1: \"pid=5\""));
  EXPECT_EQ(FileError("g comm=\n"),
            "groups.txt:1: \"comm=\": a comm has 1 to 15 bytes (the kernel "
            "keeps no more), not 0");
  EXPECT_EQ(FileError("g comm=0123456789abcdef\n"),
            "groups.txt:1: \"comm=0123456789abcdef\": a comm has 1 to 15 "
            "bytes (the kernel keeps no more), not 16");
  EXPECT_EQ(FileError("\n\ng cgroup=system.slice\n"),
            "groups.txt:3: \"cgroup=system.slice\": a cgroup path starts "
            "with '/', as /proc/PID/cgroup shows it");
  EXPECT_THAT(FileError("g cgroup=\n"), HasSubstr("groups.txt:1: \"cgroup=\""));
  // Control bytes of a value are escaped.
  EXPECT_THAT(FileError("g\x1b[2J\n"), HasSubstr("\"g\\x1b[2J\""));
}

TEST(ParseGroupFile, AProcessGivenTwoGroupsNamesBothLines) {
  EXPECT_EQ(FileError("a 42\n# x\nb tgid=42\n"),
            "groups.txt:3: tgid=42 is in group \"b\" here but in group \"a\" "
            "at line 1");
  EXPECT_EQ(FileError("a comm=srv\nb comm=srv\n"),
            "groups.txt:2: comm=\"srv\" is in group \"b\" here but in group "
            "\"a\" at line 1");
  EXPECT_EQ(FileError("a cgroup=/x\nb cgroup=/x\n"),
            "groups.txt:2: cgroup=\"/x\" is in group \"b\" here but in "
            "group \"a\" at line 1");
}

TEST(CacheGroupingSink, TgidPassesEverySampleUnchanged) {
  RecordingSink next;
  CacheGroupingSink sink(*ParseGroupBy("tgid"), next);
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "a")).ok());
  // A group the input names itself (a CSV's cache_group column) stays.
  ASSERT_TRUE(sink.OnSample(Named(20, 20, "b", 5)).ok());
  ASSERT_TRUE(sink.OnHandOver(HandOver{}).ok());
  sink.OnInputLine(9);
  EXPECT_THAT(next.samples, ElementsAre(Pair(10, 0u), Pair(20, 5u)));
  EXPECT_EQ(next.others, 1);
  EXPECT_EQ(next.last_line, 9);
  EXPECT_TRUE(sink.groups().names().empty());
}

TEST(CacheGroupingSink, CommGroupsEveryProcessOfOneNameByItsLeader) {
  RecordingSink next;
  CacheGroupingSink sink(*ParseGroupBy("comm"), next);
  const Sample samples[] = {
      Named(10, 10, "redis-server"),     // group 1, first seen
      Named(20, 20, "valkey-benchmar"),  // group 2
      Named(30, 31, "redis-server"),     // group 1: another process
      Named(10, 11, "io_thd_1"),         // a thread named apart: still 1
      Named(40, 40, ""),                 // no comm yet: its own group
      Named(50, 51, "worker"),           // before its leader: group 3
      Named(50, 50, "main"),             // the leader's name wins: 4
      Named(50, 52, "worker"),           // and stays
      Named(40, 40, "redis-server"),     // named now: group 1
      Named(20, 20, "", 99),             // the input's own group replaced
  };
  for (const Sample& sample : samples) ASSERT_TRUE(sink.OnSample(sample).ok());
  EXPECT_THAT(next.samples,
              ElementsAre(Pair(10, 1u), Pair(20, 2u), Pair(30, 1u),
                          Pair(10, 1u), Pair(40, 0u), Pair(50, 3u),
                          Pair(50, 4u), Pair(50, 4u), Pair(40, 1u),
                          Pair(20, 2u)));
  EXPECT_THAT(sink.groups().names(),
              ElementsAre("redis-server", "valkey-benchmar", "worker", "main"));
}

TEST(CacheGroupingSink, AStartOrExitForgetsTheProcessesComm) {
  RecordingSink next;
  CacheGroupingSink sink(*ParseGroupBy("comm"), next);
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "sh")).ok());      // group 1
  ASSERT_TRUE(sink.OnProcessStart(ProcessStart{5, 10}).ok());  // an exec
  ASSERT_TRUE(sink.OnSample(Named(10, 11, "redis")).ok());   // group 2
  ASSERT_TRUE(sink.OnProcessExit(ProcessExit{6, 10}).ok());
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "")).ok());  // a new process 10
  EXPECT_THAT(next.samples,
              ElementsAre(Pair(10, 1u), Pair(10, 2u), Pair(10, 0u)));
  EXPECT_EQ(next.others, 2);
}

TEST(CacheGroupingSink, AFileGroupsWhatItMatchesAndLeavesTheRestAlone) {
  RecordingSink next;
  CacheGroupingSink sink(
      FileRule("pair 10\npair comm=valkey-benchmar\nsolo tgid=30\n"), next);
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "redis-server")).ok());
  ASSERT_TRUE(sink.OnSample(Named(20, 20, "valkey-benchmar")).ok());
  ASSERT_TRUE(sink.OnSample(Named(30, 30, "cc")).ok());
  ASSERT_TRUE(sink.OnSample(Named(40, 40, "cc", 7)).ok());  // not matched
  EXPECT_THAT(next.samples, ElementsAre(Pair(10, 1u), Pair(20, 1u),
                                        Pair(30, 2u), Pair(40, 0u)));
  EXPECT_THAT(sink.groups().names(), ElementsAre("pair", "solo"));
}

TEST(CacheGroupingSink, AProcessMatchedIntoTwoGroupsStopsTheInput) {
  RecordingSink next;
  CacheGroupingSink sink(FileRule("a 10\nb comm=srv\n"), next);
  // Process 10 is unnamed at first: only its tgid line matches.
  ASSERT_TRUE(sink.OnSample(Named(10, 11, "")).ok());
  const absl::Status both = sink.OnSample(Named(10, 10, "srv"));
  EXPECT_TRUE(absl::IsInvalidArgument(both));
  EXPECT_EQ(both.message(),
            "groups.txt: process tgid 10 (comm \"srv\") is in group \"a\" by "
            "line 1 (tgid=10) and in group \"b\" by line 2 (comm=\"srv\"); a "
            "process is in one group");
  EXPECT_THAT(next.samples, ElementsAre(Pair(10, 1u)));
}

TEST(CacheGroupingSink, CgroupGroupsEveryProcessOfOnePath) {
  RecordingSink next;
  CacheGroupingSink sink(*ParseGroupBy("cgroup"), next);
  sink.OnCgroup(10, "/a");
  sink.OnCgroup(20, "/b");
  sink.OnCgroup(30, "/a");
  // Ids by first appearance among the samples: /b (20) 1, /a (10) 2; 30
  // shares 10's path, 40 has none (its own group, 0), whatever its comm.
  ASSERT_TRUE(sink.OnSample(Named(20, 20, "x")).ok());
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "x")).ok());
  ASSERT_TRUE(sink.OnSample(Named(30, 31, "y")).ok());
  ASSERT_TRUE(sink.OnSample(Named(40, 40, "x")).ok());
  // 30 moves to /b: a membership change at its next sample. An exec keeps
  // the path; the exit forgets it.
  sink.OnCgroup(30, "/b");
  ASSERT_TRUE(sink.OnSample(Named(30, 30, "y")).ok());
  ASSERT_TRUE(sink.OnProcessStart(ProcessStart{.tgid = 30}).ok());
  ASSERT_TRUE(sink.OnSample(Named(30, 30, "z")).ok());
  ASSERT_TRUE(sink.OnProcessExit(ProcessExit{.tgid = 30}).ok());
  ASSERT_TRUE(sink.OnSample(Named(30, 30, "z")).ok());
  EXPECT_THAT(next.samples,
              ElementsAre(Pair(20, 1u), Pair(10, 2u), Pair(30, 2u),
                          Pair(40, 0u), Pair(30, 1u), Pair(30, 1u),
                          Pair(30, 0u)));
  EXPECT_THAT(sink.groups().names(), ElementsAre("/b", "/a"));
}

TEST(CacheGroupingSink, AFilesCgroupLinesMatchThePathsTheInputGives) {
  RecordingSink next;
  // Groups: web 1, db 2.
  CacheGroupingSink sink(
      FileRule("web cgroup=/app/web server\ndb comm=pg\nweb 20\n"), next);
  sink.OnCgroup(10, "/app/web server");
  sink.OnCgroup(20, "/app/web server");  // by tgid and path: one group
  sink.OnCgroup(30, "/other");
  ASSERT_TRUE(sink.OnSample(Named(10, 10, "nginx")).ok());
  ASSERT_TRUE(sink.OnSample(Named(20, 20, "nginx")).ok());
  ASSERT_TRUE(sink.OnSample(Named(30, 30, "pg")).ok());
  ASSERT_TRUE(sink.OnSample(Named(40, 40, "sh")).ok());
  EXPECT_THAT(next.samples, ElementsAre(Pair(10, 1u), Pair(20, 1u),
                                        Pair(30, 2u), Pair(40, 0u)));
}

TEST(CacheGroupingSink, ACgroupLineAndAnotherDisagreeingStopTheInput) {
  RecordingSink next;
  CacheGroupingSink sink(FileRule("a cgroup=/x\nb 10\n"), next);
  sink.OnCgroup(10, "/x");
  const absl::Status both = sink.OnSample(Named(10, 10, "srv"));
  EXPECT_TRUE(absl::IsInvalidArgument(both));
  EXPECT_EQ(both.message(),
            "groups.txt: process tgid 10 (comm \"srv\") is in group \"b\" by "
            "line 2 (tgid=10) and in group \"a\" by line 1 (cgroup=\"/x\"); "
            "a process is in one group");
  EXPECT_TRUE(next.samples.empty());
}

// RecordingSession is an in-process session that also keeps every sample's
// (tgid, cache_group) as the session got it.
class RecordingSession : public AbSession {
 public:
  RecordingSession(std::unique_ptr<AbSession> inner,
                   std::vector<Grouped>& samples)
      : inner_(std::move(inner)), samples_(samples) {}
  absl::Status OnSample(const Sample& sample) override {
    samples_.emplace_back(sample.tgid, sample.cache_group);
    return inner_->OnSample(sample);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return inner_->OnHandOver(hand_over);
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return inner_->OnProcessExit(exit);
  }
  absl::StatusOr<SessionOutcome> Finish() override { return inner_->Finish(); }
  bool reports_scans() const override { return inner_->reports_scans(); }
  bool enabled() const override { return inner_->enabled(); }

 private:
  std::unique_ptr<AbSession> inner_;
  std::vector<Grouped>& samples_;
};

const PolicyRegistry& Registry() {
  static const PolicyRegistry* registry =
      new PolicyRegistry(*BuildPolicyRegistry({}));
  return *registry;
}

SessionMaker Recording(std::vector<Grouped>& samples) {
  return [&samples](std::shared_ptr<const Topology> topology,
                    const client::SessionSpec& config, AbObserver& observer)
             -> absl::StatusOr<std::unique_ptr<AbSession>> {
    absl::StatusOr<std::unique_ptr<AbSession>> inner = MakeInProcessSession(
        std::move(topology), config, Registry(), observer);
    if (!inner.ok()) return inner.status();
    return std::make_unique<RecordingSession>(*std::move(inner), samples);
  };
}

// CsvOptions is an A/B of a CSV of four processes on 4 CPUs: redis-server
// twice, its client, and one the CSV puts in group 5 itself.
AbOptions CsvOptions() {
  const std::string path =
      ScratchPath("groups.csv");
  std::ofstream(path)
      << "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
         "footprint_pages,cache_group,comm\n"
         "4000000,0,10,10,4000000,1,,,,,redis-server\n"
         "4000000,1,20,20,4000000,1,,,,,valkey-benchmar\n"
         "4000000,2,30,30,4000000,1,,,,,redis-server\n"
         "4000000,3,40,40,4000000,1,,,,5,cc\n"
         "8000000,0,10,10,4000000,1,,,,,\n";
  AbOptions options;
  options.input = *ParseAbInput("csv:" + path);
  options.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  return options;
}

TEST(RunAbGroupBy, TheSessionGetsTheGroupsOnEveryThreadCount) {
  for (const int jobs : {1, 2}) {
    std::vector<Grouped> seen;
    AbOptions options = CsvOptions();
    options.group_by = *ParseGroupBy("comm");
    options.jobs = jobs;
    absl::StatusOr<AbResult> result =
        RunAb(options, Registry(), Recording(seen));
    ASSERT_TRUE(result.ok()) << result.status();
    // comm: redis-server 1, valkey-benchmar 2, cc 3 (its 5 replaced); the
    // unnamed last row keeps process 10's group.
    EXPECT_THAT(seen, ElementsAre(Pair(10, 1u), Pair(20, 2u), Pair(30, 1u),
                                  Pair(40, 3u), Pair(10, 1u)))
        << jobs;
    EXPECT_THAT(result->input.description, HasSubstr(" group-by=comm"));
    // The report lists them busiest first: redis-server's 10 ran 4 + 4 ms
    // and 30 ran 4 ms (12 ms); the others 4 ms each, by id.
    ASSERT_EQ(result->cache_groups.size(), 3u) << jobs;
    EXPECT_EQ(result->cache_groups[0].name, "redis-server");
    EXPECT_THAT(result->cache_groups[0].member_tgids, ElementsAre(10, 30));
    EXPECT_EQ(result->cache_groups[0].runtime_ns, 12'000'000);
    EXPECT_EQ(result->cache_groups[1].name, "valkey-benchmar");
    EXPECT_THAT(result->cache_groups[2].member_tgids, ElementsAre(40));
    EXPECT_EQ(result->cache_groups[2].id, 3u);
  }
}

TEST(RunAbGroupBy, TgidIsTheReportOfARunWithoutTheFlag) {
  std::vector<Grouped> seen;
  AbOptions with_flag = CsvOptions();
  with_flag.group_by = *ParseGroupBy("tgid");
  absl::StatusOr<AbResult> flagged =
      RunAb(with_flag, Registry(), Recording(seen));
  ASSERT_TRUE(flagged.ok()) << flagged.status();
  // The CSV's own groups reach the session as they are.
  EXPECT_THAT(seen, ElementsAre(Pair(10, 0u), Pair(20, 0u), Pair(30, 0u),
                                Pair(40, 5u), Pair(10, 0u)));
  absl::StatusOr<AbResult> plain =
      RunAb(CsvOptions(), Registry(), InProcessSessions(Registry()));
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_GT(plain->input.samples, 0u);  // something to compare
  EXPECT_EQ(ComparableJson(*flagged), ComparableJson(*plain));
  EXPECT_EQ(flagged->input.description, plain->input.description);
}

TEST(RunAbGroupBy, AProcessMatchedIntoTwoGroupsFailsTheRun) {
  const std::string path =
      ScratchPath("clash.txt");
  std::ofstream(path) << "server 10\nbench comm=redis-server\n";
  AbOptions options = CsvOptions();
  options.group_by = *ParseGroupBy("file:" + path);
  const absl::Status status =
      RunAb(options, Registry(), InProcessSessions(Registry())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr(path + ": process tgid 10 (comm \"redis-server\") is "
                               "in group \"server\" by line 1"));
}

// kCapture is a capture as `schedcache record --output` writes it, by
// hand: four processes, each running 10 ms on a CPU of its own from 10 s.
// srv 100 and cli 200 are in cgroup /app/a, srv 300 in "/app b" (the blank
// escaped), and etc 400's path was unreadable (no line).
constexpr char kCapture[] =
    "# schedcache_cgroup: 100 /app/a\n"
    "# schedcache_cgroup: 200 /app/a\n"
    "# schedcache_cgroup: 300 /app\\040b\n"
    "# schedcache_cgroup: 999 /never/seen\n"
    "  <idle>-0 (-------) [000] 10.000000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120\n"
    "  <idle>-0 (-------) [001] 10.000000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=cli next_pid=200 next_prio=120\n"
    "  <idle>-0 (-------) [002] 10.000000000: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=300 next_prio=120\n"
    "  <idle>-0 (-------) [003] 10.000000000: sched_switch: prev_comm=swapper/3 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=etc next_pid=400 next_prio=120\n"
    "   srv-100 (    100) [000] 10.010000000: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120\n"
    "   cli-200 (    200) [001] 10.010000000: sched_switch: prev_comm=cli prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
    "   srv-300 (    300) [002] 10.010000000: sched_switch: prev_comm=srv prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120\n"
    "   etc-400 (    400) [003] 10.010000000: sched_switch: prev_comm=etc prev_pid=400 prev_prio=120 prev_state=S ==> next_comm=swapper/3 next_pid=0 next_prio=120\n";

// TraceOptions is an A/B of `text`, written to a file, on 4 CPUs.
AbOptions TraceOptions(absl::string_view name, absl::string_view text) {
  const std::string path =
      ScratchPath(std::string(name));
  std::ofstream(path) << text;
  AbOptions options;
  options.input = *ParseAbInput("trace:" + path);
  options.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  return options;
}

TEST(RunAbGroupBy, CgroupGroupsARecordedCaptureByItsPaths) {
  absl::StatusOr<AbResult> first;
  for (const int jobs : {1, 2}) {
    std::vector<Grouped> seen;
    AbOptions options = TraceOptions("capture.txt", kCapture);
    options.group_by = *ParseGroupBy("cgroup");
    options.jobs = jobs;
    absl::StatusOr<AbResult> result =
        RunAb(options, Registry(), Recording(seen));
    ASSERT_TRUE(result.ok()) << result.status();
    // At HZ 250 the ticks at 10.004 s and 10.008 s, then the switch-outs at
    // 10.010 s, each CPU in order 0..3: ids by first appearance, /app/a
    // (100, then 200) 1, "/app b" (300) 2, and 400 without a path its own
    // group (0). The line for 999, which never runs, numbers nothing.
    const std::vector<Grouped> round = {{100, 1}, {200, 1}, {300, 2},
                                        {400, 0}};
    std::vector<Grouped> expected;
    for (int i = 0; i < 3; ++i) {
      expected.insert(expected.end(), round.begin(), round.end());
    }
    EXPECT_EQ(seen, expected) << jobs;
    EXPECT_THAT(result->input.description, HasSubstr(" group-by=cgroup"));
    if (jobs == 1) {
      first = std::move(result);
    } else {
      EXPECT_EQ(ComparableJson(*result), ComparableJson(*first));
    }
  }
}

TEST(RunAbGroupBy, CgroupOnAnInputWithoutPathsSaysWhatIsMissing) {
  // A trace without cgroup lines: kCapture's scheduler lines alone.
  std::string plain = kCapture;
  plain.erase(0, plain.find("  <idle>"));
  AbOptions trace = TraceOptions("plain.txt", plain);
  trace.group_by = *ParseGroupBy("cgroup");
  const absl::Status status =
      RunAb(trace, Registry(), InProcessSessions(Registry())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("--group-by cgroup needs each process's cgroup path, "
                        "and input trace:"));
  EXPECT_THAT(status.message(),
              HasSubstr("plain.txt carries none: it has no `# "
                        "schedcache_cgroup:` line"));

  AbOptions csv = CsvOptions();
  csv.group_by = FileRule("web cgroup=/app\n");
  const absl::Status csv_status =
      RunAb(csv, Registry(), InProcessSessions(Registry())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(csv_status)) << csv_status;
  EXPECT_THAT(csv_status.message(),
              HasSubstr("(its cgroup= lines) needs each process's cgroup "
                        "path, and input csv:"));
  EXPECT_THAT(csv_status.message(), HasSubstr("no cgroup column"));

  AbOptions workload;
  workload.input = *ParseAbInput("workload:valkey");
  workload.session.topology = "synthetic:pack:1 l3:2 core:2 pu:1";
  workload.group_by = *ParseGroupBy("cgroup");
  const absl::Status workload_status =
      RunAb(workload, Registry(), InProcessSessions(Registry())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(workload_status)) << workload_status;
  EXPECT_THAT(workload_status.message(), HasSubstr("input workload:valkey"));
}

}  // namespace
}  // namespace schedcache::ab
