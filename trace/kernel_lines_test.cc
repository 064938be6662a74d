// schedcache's own capture lines (trace_line.h): the kernel decision line
// and the kernel clock comment, parsed, written and replayed.
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "events/event_sink.h"
#include "events/recording_sink.h"
#include "gtest/gtest.h"
#include "trace/ftrace_writer.h"
#include "trace/trace_line.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

constexpr char kHeader[] =
    "            spin-77      (     70) [002] 12.000000345: "
    "schedcache_task_cache_work: ";
constexpr char kFields[] =
    "pid=77 tgid=70 cpu=3 scanned=1 nr_running_avg=2 footprint=140 "
    "group=9e3779b97f4a7c15 jiffies=4294895296 group_epoch=11 "
    "next_scan=4294895298 cpu_epoch=10 cpu_epoch_next=4294895297";

TEST(KernelDecisionLine, ReadsEveryField) {
  const std::string text = std::string(kHeader) + kFields;
  const TraceLine line = ParseTraceLine(text);
  ASSERT_EQ(line.kind, Kind::kKernelDecision) << line.error;
  const KernelDecision& d = line.decision;
  EXPECT_EQ(d.timestamp_ns, 12'000'000'345);
  EXPECT_EQ(d.cpu, 2);
  EXPECT_EQ(line.task_pid, 77);
  EXPECT_EQ(line.task_tgid, 70);
  EXPECT_EQ(d.tid, 77);
  EXPECT_EQ(d.tgid, 70);
  EXPECT_EQ(d.preferred_cpu, 3);
  EXPECT_TRUE(d.scanned);
  EXPECT_EQ(d.nr_running_avg, 2);
  EXPECT_EQ(d.footprint, 140);
  EXPECT_EQ(d.group, 0x9e3779b97f4a7c15u);
  EXPECT_EQ(d.jiffies, 4294895296);
  EXPECT_EQ(d.group_epoch, 11);
  EXPECT_EQ(d.next_scan, 4294895298);
  EXPECT_EQ(d.cpu_epoch, 10);
  EXPECT_EQ(d.cpu_epoch_next, 4294895297);
}

TEST(KernelDecisionLine, ReadsNoPreferredCpu) {
  const std::string text =
      std::string(kHeader) +
      "pid=77 tgid=70 cpu=-1 scanned=0 nr_running_avg=0 footprint=0 group=0 "
      "jiffies=1 group_epoch=0 next_scan=0 cpu_epoch=0 cpu_epoch_next=0";
  const TraceLine line = ParseTraceLine(text);
  ASSERT_EQ(line.kind, Kind::kKernelDecision) << line.error;
  EXPECT_EQ(line.decision.preferred_cpu, -1);
  EXPECT_FALSE(line.decision.scanned);
  EXPECT_EQ(line.decision.group, 0u);
}

// Each bad field is malformed with the message naming that field.
TEST(KernelDecisionLine, NamesTheFirstBadField) {
  struct Case {
    std::string from, to;
    std::string_view error;
  };
  const std::vector<Case> cases = {
      {"pid=77 ", "", "schedcache_task_cache_work: pid= missing or not a number"},
      {"tgid=70", "tgid=x", "schedcache_task_cache_work: tgid= missing or not a number"},
      {"cpu=3", "cpu=", "schedcache_task_cache_work: cpu= missing or not a number"},
      {"scanned=1", "scanned=2", "schedcache_task_cache_work: scanned= missing or not 0/1"},
      {"nr_running_avg=2", "nr_running=2",
       "schedcache_task_cache_work: nr_running_avg= missing or not a number"},
      {"footprint=140", "footprint=1e3",
       "schedcache_task_cache_work: footprint= missing or not a number"},
      {"group=9e3779b97f4a7c15", "group=0x9e37",
       "schedcache_task_cache_work: group= missing or not hex"},
      // 17 hex digits do not fit 64 bits.
      {"group=9e3779b97f4a7c15", "group=19e3779b97f4a7c15",
       "schedcache_task_cache_work: group= missing or not hex"},
      {"jiffies=4294895296", "jiffies=1234567890123456789",
       "schedcache_task_cache_work: jiffies= missing or not a number"},
      {"group_epoch=11 ", "",
       "schedcache_task_cache_work: group_epoch= missing or not a number"},
      {"next_scan=4294895298", "next_scan=-",
       "schedcache_task_cache_work: next_scan= missing or not a number"},
      {"cpu_epoch=10", "cpu_epoch=ten",
       "schedcache_task_cache_work: cpu_epoch= missing or not a number"},
      {" cpu_epoch_next=4294895297", "",
       "schedcache_task_cache_work: cpu_epoch_next= missing or not a number"},
      {"cpu_epoch_next=4294895297", "cpu_epoch_next=4294895297 extra=1",
       "schedcache_task_cache_work: unknown field after cpu_epoch_next="},
      {"pid=77", "pid=0",
       "schedcache_task_cache_work: pid and tgid must be > 0, cpu >= -1"},
      {"cpu=3", "cpu=-2",
       "schedcache_task_cache_work: pid and tgid must be > 0, cpu >= -1"},
  };
  for (const Case& c : cases) {
    std::string fields = kFields;
    const size_t at = fields.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    fields.replace(at, c.from.size(), c.to);
    const std::string text = std::string(kHeader) + fields;
    const TraceLine line = ParseTraceLine(text);
    EXPECT_EQ(line.kind, Kind::kMalformed) << text;
    EXPECT_EQ(line.error, c.error) << text;
  }
}

TEST(KernelDecisionLine, WithoutHeaderIsMalformed) {
  const TraceLine line =
      ParseTraceLine(std::string("schedcache_task_cache_work: ") + kFields);
  EXPECT_EQ(line.kind, Kind::kMalformed);
}

TEST(KernelClockLine, ReadsEveryFieldAndNamesABadOne) {
  const TraceLine line = ParseTraceLine(
      "# schedcache_kernel_clock: hz=250 jiffies=4294895296 "
      "at_ns=12000000345 epoch_period=2 cpu_epoch_next=4294895297");
  ASSERT_EQ(line.kind, Kind::kKernelClock) << line.error;
  EXPECT_EQ(line.clock.hz, 250);
  EXPECT_EQ(line.clock.jiffies, 4294895296);
  EXPECT_EQ(line.clock.at_ns, 12'000'000'345);
  EXPECT_EQ(line.clock.epoch_period, 2);
  EXPECT_EQ(line.clock.cpu_epoch_next, 4294895297);

  const TraceLine bad = ParseTraceLine(
      "# schedcache_kernel_clock: hz=250 jiffies=4294895296 "
      "at_ns=12000000345 cpu_epoch_next=4294895297");
  EXPECT_EQ(bad.kind, Kind::kMalformed);
  EXPECT_EQ(bad.error,
            "schedcache_kernel_clock: epoch_period= missing or not a number");
  const TraceLine zero_hz = ParseTraceLine(
      "# schedcache_kernel_clock: hz=0 jiffies=1 at_ns=1 epoch_period=2 "
      "cpu_epoch_next=1");
  EXPECT_EQ(zero_hz.kind, Kind::kMalformed);
  // Other comments stay comments.
  EXPECT_EQ(ParseTraceLine("# tracer: nop").kind, Kind::kNotScheduler);
}

TEST(KernelLines, WrittenLinesParseBackToTheSameValues) {
  const KernelDecision d{.timestamp_ns = 5'000'000'042,
                         .cpu = 1,
                         .tgid = 4240,
                         .tid = 4242,
                         .preferred_cpu = 2,
                         .scanned = true,
                         .nr_running_avg = 3,
                         .footprint = 512,
                         .group = 0xffffffffffffffffu,
                         .jiffies = 4294893000,
                         .group_epoch = 7,
                         .next_scan = 4294893002,
                         .cpu_epoch = 8,
                         .cpu_epoch_next = 4294893001};
  const std::string line = FormatKernelDecisionLine(d, "sc-busy");
  EXPECT_EQ(line,
            "         sc-busy-4242    (   4240) [001] 5.000000042: "
            "schedcache_task_cache_work: pid=4242 tgid=4240 cpu=2 scanned=1 "
            "nr_running_avg=3 footprint=512 group=ffffffffffffffff "
            "jiffies=4294893000 group_epoch=7 next_scan=4294893002 "
            "cpu_epoch=8 cpu_epoch_next=4294893001\n");
  const TraceLine parsed =
      ParseTraceLine(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_EQ(parsed.kind, Kind::kKernelDecision) << parsed.error;
  const KernelDecision& p = parsed.decision;
  EXPECT_EQ(p.timestamp_ns, d.timestamp_ns);
  EXPECT_EQ(p.cpu, d.cpu);
  EXPECT_EQ(p.tgid, d.tgid);
  EXPECT_EQ(p.tid, d.tid);
  EXPECT_EQ(p.preferred_cpu, d.preferred_cpu);
  EXPECT_EQ(p.scanned, d.scanned);
  EXPECT_EQ(p.nr_running_avg, d.nr_running_avg);
  EXPECT_EQ(p.footprint, d.footprint);
  EXPECT_EQ(p.group, d.group);
  EXPECT_EQ(p.jiffies, d.jiffies);
  EXPECT_EQ(p.group_epoch, d.group_epoch);
  EXPECT_EQ(p.next_scan, d.next_scan);
  EXPECT_EQ(p.cpu_epoch, d.cpu_epoch);
  EXPECT_EQ(p.cpu_epoch_next, d.cpu_epoch_next);

  const KernelClock clock{.hz = 300, .jiffies = 99, .at_ns = 1'000,
                          .epoch_period = 3, .cpu_epoch_next = 100};
  const std::string header = FormatKernelClockLine(clock);
  EXPECT_EQ(header,
            "# schedcache_kernel_clock: hz=300 jiffies=99 at_ns=1000 "
            "epoch_period=3 cpu_epoch_next=100\n");
  const TraceLine clock_line =
      ParseTraceLine(std::string_view(header).substr(0, header.size() - 1));
  ASSERT_EQ(clock_line.kind, Kind::kKernelClock) << clock_line.error;
  EXPECT_EQ(clock_line.clock.hz, 300);
  EXPECT_EQ(clock_line.clock.at_ns, 1'000);
}

TEST(KernelTickLine, ReadsEveryFieldAndIdle) {
  const TraceLine line = ParseTraceLine(
      "            spin-77      (     70) [002] 12.000000345: "
      "schedcache_sched_tick: pid=77 tgid=70 jiffies=4294895296");
  ASSERT_EQ(line.kind, Kind::kKernelTick) << line.error;
  EXPECT_EQ(line.tick.timestamp_ns, 12'000'000'345);
  EXPECT_EQ(line.tick.cpu, 2);
  EXPECT_EQ(line.tick.tid, 77);
  EXPECT_EQ(line.tick.tgid, 70);
  EXPECT_EQ(line.tick.jiffies, 4294895296);
  // A line without the NUMA fields (every capture before them) leaves
  // both unknown, which the replay's Samples carry as unchanged.
  EXPECT_EQ(line.tick.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(line.tick.footprint_pages, kUnchangedFootprint);
  const TraceLine idle = ParseTraceLine(
      "       swapper/1-0       (-----) [001] 12.000000345: "
      "schedcache_sched_tick: pid=0 tgid=0 jiffies=5");
  ASSERT_EQ(idle.kind, Kind::kKernelTick) << idle.error;
  EXPECT_EQ(idle.tick.tid, 0);
  EXPECT_EQ(idle.tick.cpu, 1);
}

// Each bad field is malformed with the message naming that field.
TEST(KernelTickLine, NamesTheFirstBadField) {
  const std::string header =
      "            spin-77      (     70) [002] 12.000000345: "
      "schedcache_sched_tick: ";
  const struct {
    std::string fields;
    std::string_view error;
  } cases[] = {
      {"pid=x tgid=70 jiffies=1",
       "schedcache_sched_tick: pid= missing or not a number"},
      {"pid=77 jiffies=1",
       "schedcache_sched_tick: tgid= missing or not a number"},
      {"pid=77 tgid=70 jiffies=",
       "schedcache_sched_tick: jiffies= missing or not a number"},
      {"pid=77 tgid=70 jiffies=1 extra=2",
       "schedcache_sched_tick: unknown field after jiffies= and its "
       "optional numa_preferred_nid= footprint="},
      // The optional fields come in their order, each once.
      {"pid=77 tgid=70 jiffies=1 footprint=5 numa_preferred_nid=1",
       "schedcache_sched_tick: unknown field after jiffies= and its "
       "optional numa_preferred_nid= footprint="},
      {"pid=77 tgid=70 jiffies=1 numa_preferred_nid=x",
       "schedcache_sched_tick: numa_preferred_nid= not a number"},
      {"pid=77 tgid=70 jiffies=1 numa_preferred_nid=0 footprint=",
       "schedcache_sched_tick: footprint= not a number"},
      {"pid=77 tgid=70 jiffies=1 numa_preferred_nid=-2",
       "schedcache_sched_tick: numa_preferred_nid must be >= -1 and "
       "footprint >= 0"},
      {"pid=77 tgid=70 jiffies=1 footprint=-1",
       "schedcache_sched_tick: numa_preferred_nid must be >= -1 and "
       "footprint >= 0"},
      {"pid=77 tgid=0 jiffies=1",
       "schedcache_sched_tick: pid and tgid must be both 0 (idle) or both "
       "> 0"},
  };
  for (const auto& c : cases) {
    const TraceLine line = ParseTraceLine(header + c.fields);
    EXPECT_EQ(line.kind, Kind::kMalformed) << c.fields;
    EXPECT_EQ(line.error, c.error) << c.fields;
  }
}

TEST(KernelTickLine, WrittenLineParsesBackToTheSameValues) {
  const KernelTick tick{.timestamp_ns = 5'000'000'042,
                        .cpu = 3,
                        .tgid = 4240,
                        .tid = 4242,
                        .jiffies = 4294893000};
  const std::string line = FormatKernelTickLine(tick, "sc-busy");
  EXPECT_EQ(line,
            "         sc-busy-4242    (   4240) [003] 5.000000042: "
            "schedcache_sched_tick: pid=4242 tgid=4240 jiffies=4294893000\n");
  const TraceLine parsed =
      ParseTraceLine(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_EQ(parsed.kind, Kind::kKernelTick) << parsed.error;
  EXPECT_EQ(parsed.tick.timestamp_ns, tick.timestamp_ns);
  EXPECT_EQ(parsed.tick.cpu, tick.cpu);
  EXPECT_EQ(parsed.tick.tgid, tick.tgid);
  EXPECT_EQ(parsed.tick.tid, tick.tid);
  EXPECT_EQ(parsed.tick.jiffies, tick.jiffies);
  EXPECT_EQ(parsed.task_pid, tick.tid);
  EXPECT_EQ(parsed.task_tgid, tick.tgid);
  EXPECT_EQ(parsed.tick.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(parsed.tick.footprint_pages, kUnchangedFootprint);
}

TEST(KernelTickLine, NumaAttributesRoundTripEachOnItsOwn) {
  KernelTick tick{.timestamp_ns = 5'000'000'042,
                  .cpu = 3,
                  .tgid = 4240,
                  .tid = 4242,
                  .jiffies = 7};
  const std::string prefix =
      "         sc-busy-4242    (   4240) [003] 5.000000042: "
      "schedcache_sched_tick: pid=4242 tgid=4240 jiffies=7";
  const struct {
    int32_t numa_node;
    int64_t footprint_pages;
    std::string_view fields;
  } cases[] = {
      {1, 16095, " numa_preferred_nid=1 footprint=16095"},
      {-1, 0, " numa_preferred_nid=-1 footprint=0"},  // no node, no pages
      {0, kUnchangedFootprint, " numa_preferred_nid=0"},
      {kUnchangedNumaNode, 4096, " footprint=4096"},
  };
  for (const auto& c : cases) {
    tick.numa_node = c.numa_node;
    tick.footprint_pages = c.footprint_pages;
    const std::string line = FormatKernelTickLine(tick, "sc-busy");
    EXPECT_EQ(line, prefix + std::string(c.fields) + "\n");
    const TraceLine parsed =
        ParseTraceLine(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_EQ(parsed.kind, Kind::kKernelTick) << parsed.error;
    EXPECT_EQ(parsed.tick.numa_node, c.numa_node) << c.fields;
    EXPECT_EQ(parsed.tick.footprint_pages, c.footprint_pages) << c.fields;
    EXPECT_EQ(parsed.tick.jiffies, 7);
  }
}

// ReplayAtHz1000 replays the capture `text` at HZ 1000, without a cpu map
// or a topology, into `sink`.
absl::StatusOr<ReplayStats> ReplayAtHz1000(const std::string& text,
                                           EventSink& sink) {
  TraceOptions options;
  options.hz = 1000;
  return ReplayTraceText(text, options, sink);
}

// OrderSink keeps what arrives, in order: "S<tid>@t", "D<tid>@t".
class OrderSink : public EventSink {
 public:
  absl::Status OnSample(const Sample& s) override {
    order.push_back(Entry('S', s.tid, s.timestamp_ns));
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver&) override {
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit&) override {
    return absl::OkStatus();
  }
  absl::Status OnKernelDecision(const KernelDecision& d) override {
    order.push_back(Entry('D', d.tid, d.timestamp_ns));
    decisions.push_back(d);
    return absl::OkStatus();
  }
  std::vector<std::string> order;
  std::vector<KernelDecision> decisions;

 private:
  // Entry is "KIND TID@TIME" without the space, e.g. "S11@1000000".
  static std::string Entry(char kind, int32_t tid, int64_t timestamp_ns) {
    return std::string(1, kind) + std::to_string(tid) + "@" +
           std::to_string(timestamp_ns);
  }
};

// Thread 11 runs on CPU 0 from 0 ms; HZ 1000 ticks at 1, 2, 3 ms. A
// decision at 2.5 ms comes after the ticks at 1 and 2 ms and before the
// one at 3 ms; its CPUs go through the cpu map (0->4, 1->5).
TEST(KernelLinesReplay, DeliversDecisionsInTimeOrderAndKeepsTheClock) {
  const std::string text =
      "# schedcache_kernel_clock: hz=1000 jiffies=500 at_ns=400000 "
      "epoch_period=2 cpu_epoch_next=502\n"
      "          <idle>-0       (-----) [000] 0.000000000: sched_switch: "
      "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
      "next_comm=w next_pid=11 next_prio=120\n"
      "               w-11      (     10) [000] 0.002500000: "
      "schedcache_task_cache_work: pid=11 tgid=10 cpu=1 scanned=1 "
      "nr_running_avg=1 footprint=4 group=ab jiffies=502 group_epoch=1 "
      "next_scan=504 cpu_epoch=1 cpu_epoch_next=504\n"
      "               w-11      (     10) [000] 0.003500000: sched_switch: "
      "prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> "
      "next_comm=swapper/0 next_pid=0 next_prio=120\n";
  TraceOptions options;
  options.hz = 1000;
  absl::StatusOr<CpuMap> map = CpuMap::Parse("0=4,1=5");
  ASSERT_TRUE(map.ok()) << map.status();
  options.cpu_map = *map;
  OrderSink sink;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(text, options, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->kernel_decisions, 1);
  ASSERT_TRUE(stats->kernel_clock.has_value());
  EXPECT_EQ(stats->kernel_clock->jiffies, 500);
  EXPECT_EQ(stats->kernel_clock->at_ns, 400'000);
  EXPECT_EQ(sink.order,
            (std::vector<std::string>{"S11@1000000", "S11@2000000",
                                      "D11@2500000", "S11@3000000",
                                      "S11@3500000"}));
  ASSERT_EQ(sink.decisions.size(), 1u);
  EXPECT_EQ(sink.decisions[0].cpu, 4);
  EXPECT_EQ(sink.decisions[0].preferred_cpu, 5);
  EXPECT_EQ(sink.decisions[0].group, 0xabu);
}

// Thread 11 runs on CPU 0 from 0 to 9.5 ms at HZ 1000. The grid ticks it at
// 1 ms; the first tick line (1.5 ms) ends the grid, and from then on only
// the kernel's ticks at 1.5, 4.2 and 9.1 ms tick it. The tick at 6 ms names
// thread 12, which CPU 0 is not tracked running: counted, nobody ticked.
// Deltas: 1 - 0 = 1 ms, 1.5 - 1 = 0.5 ms, 4.2 - 1.5 = 2.7 ms, 9.1 - 4.2 =
// 4.9 ms, switch-out 9.5 - 9.1 = 0.4 ms; they add up to the 9.5 ms run.
TEST(KernelLinesReplay, RecordedTicksTickWhereTheKernelTicked) {
  const std::string text =
      "          <idle>-0       (-----) [000] 0.000000000: sched_switch: "
      "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
      "next_comm=w next_pid=11 next_prio=120\n"
      "               w-11      (     10) [000] 0.001500000: "
      "schedcache_sched_tick: pid=11 tgid=10 jiffies=2\n"
      "               w-11      (     10) [000] 0.004200000: "
      "schedcache_sched_tick: pid=11 tgid=10 jiffies=5\n"
      "               x-12      (     12) [000] 0.006000000: "
      "schedcache_sched_tick: pid=12 tgid=12 jiffies=6\n"
      "               w-11      (     10) [000] 0.009100000: "
      "schedcache_sched_tick: pid=11 tgid=10 jiffies=9\n"
      "               w-11      (     10) [000] 0.009500000: sched_switch: "
      "prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> "
      "next_comm=swapper/0 next_pid=0 next_prio=120\n";
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats = ReplayAtHz1000(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  EXPECT_EQ(stats->kernel_ticks, 4);
  EXPECT_EQ(stats->unmatched_ticks, 1);
  EXPECT_EQ(stats->tick_samples, 4);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 5u);
  const int64_t want_t[] = {1'000'000, 1'500'000, 4'200'000, 9'100'000,
                            9'500'000};
  const int64_t want_delta[] = {1'000'000, 500'000, 2'700'000, 4'900'000,
                                400'000};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(samples[i].timestamp_ns, want_t[i]) << i;
    EXPECT_EQ(samples[i].delta_ns, want_delta[i]) << i;
    EXPECT_EQ(samples[i].tid, 11) << i;
    EXPECT_EQ(samples[i].tick, i < 4) << i;
  }
  EXPECT_EQ(stats->runtime_ns[0], 9'500'000);
}

TEST(KernelLinesReplay, TickSamplesCarryTheTickLinesNumaAttributes) {
  // The grid ticks at 1 ms until the first tick line (1.5 ms), which says
  // node 1 and 16095 pages; the one at 4.2 ms says neither (as every line
  // of an older capture), so its Sample leaves both unchanged.
  const std::string text =
      "          <idle>-0       (-----) [000] 0.000000000: sched_switch: "
      "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
      "next_comm=w next_pid=11 next_prio=120\n"
      "               w-11      (     10) [000] 0.001500000: "
      "schedcache_sched_tick: pid=11 tgid=10 jiffies=2 numa_preferred_nid=1 "
      "footprint=16095\n"
      "               w-11      (     10) [000] 0.004200000: "
      "schedcache_sched_tick: pid=11 tgid=10 jiffies=5\n";
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats = ReplayAtHz1000(text, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 0);
  const std::vector<Sample> samples = sink.Samples();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[1].timestamp_ns, 1'500'000);
  EXPECT_EQ(samples[1].numa_node, 1);
  EXPECT_EQ(samples[1].footprint_pages, 16095);
  for (const int i : {0, 2}) {
    EXPECT_EQ(samples[i].numa_node, kUnchangedNumaNode) << i;
    EXPECT_EQ(samples[i].footprint_pages, kUnchangedFootprint) << i;
  }
}

TEST(KernelLinesReplay, ADecisionBackInTimeOrASecondClockIsMalformed) {
  const std::string text =
      "# schedcache_kernel_clock: hz=250 jiffies=1 at_ns=1 epoch_period=2 "
      "cpu_epoch_next=2\n"
      "               w-11      (     10) [000] 0.002000000: sched_switch: "
      "prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> "
      "next_comm=swapper/0 next_pid=0 next_prio=120\n"
      "               w-11      (     10) [000] 0.001000000: "
      "schedcache_task_cache_work: pid=11 tgid=10 cpu=-1 scanned=0 "
      "nr_running_avg=0 footprint=0 group=0 jiffies=1 group_epoch=0 "
      "next_scan=0 cpu_epoch=0 cpu_epoch_next=0\n"
      "# schedcache_kernel_clock: hz=250 jiffies=1 at_ns=1 epoch_period=2 "
      "cpu_epoch_next=2\n";
  OrderSink sink;
  const absl::StatusOr<ReplayStats> stats = ReplayTraceText(text, {}, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->malformed_lines, 2);
  EXPECT_EQ(stats->kernel_decisions, 0);
  EXPECT_TRUE(sink.decisions.empty());
  ASSERT_EQ(stats->first_malformed.size(), 2u);
  EXPECT_EQ(stats->first_malformed[0].error,
            "timestamp is before the previous scheduler event");
  EXPECT_EQ(stats->first_malformed[1].error,
            "a second schedcache_kernel_clock line");
}

// A sink that takes no decisions stops the replay with its refusal.
TEST(KernelLinesReplay, ASinkThatTakesNoDecisionsStopsTheReplay) {
  class NoDecisions : public EventSink {
    absl::Status OnSample(const Sample&) override { return absl::OkStatus(); }
    absl::Status OnHandOver(const HandOver&) override {
      return absl::OkStatus();
    }
    absl::Status OnProcessExit(const ProcessExit&) override {
      return absl::OkStatus();
    }
  } sink;
  const absl::StatusOr<ReplayStats> stats = ReplayTraceText(
      std::string(kHeader) + kFields + "\n", {}, sink);
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kUnimplemented);
}

// WriteTemp writes `text` to a file of its own under the test's temporary
// directory and returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/kernel_lines_test_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadKernelClock, FindsTheHeaderBeforeTheFirstEventOnly) {
  constexpr char kClock[] =
      "# schedcache_kernel_clock: hz=250 jiffies=4294906005 "
      "at_ns=54843202430 epoch_period=2 cpu_epoch_next=4294906006\n";
  constexpr char kSwitch[] =
      "          <idle>-0       (-----) [000] 0.000000000: sched_switch: "
      "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
      "next_comm=w next_pid=11 next_prio=120\n";
  const absl::StatusOr<std::optional<KernelClock>> first = ReadKernelClock(
      WriteTemp("first", std::string("# tracer: nop\n") + kClock + kSwitch));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->hz, 250);
  EXPECT_EQ((*first)->jiffies, 4294906005);
  EXPECT_EQ((*first)->at_ns, 54843202430);
  EXPECT_EQ((*first)->epoch_period, 2);
  EXPECT_EQ((*first)->cpu_epoch_next, 4294906006);

  // After an event it no longer sets the clock of a replay that has begun.
  const absl::StatusOr<std::optional<KernelClock>> late =
      ReadKernelClock(WriteTemp("late", std::string(kSwitch) + kClock));
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_FALSE(late->has_value());

  const absl::StatusOr<std::optional<KernelClock>> none =
      ReadKernelClock(WriteTemp("none", kSwitch));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST(ReadKernelClock, StandardInputIsNotReadAndAMissingFileIsNotFound) {
  const absl::StatusOr<std::optional<KernelClock>> stdin_clock =
      ReadKernelClock("-");
  ASSERT_TRUE(stdin_clock.ok()) << stdin_clock.status();
  EXPECT_FALSE(stdin_clock->has_value());
  EXPECT_EQ(ReadKernelClock(::testing::TempDir() + "/no_such_capture")
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace schedcache
