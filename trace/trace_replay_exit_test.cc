// Trace replay of sched_process_exit: a group leader's exit ends its
// process (ProcessExit), any other thread's exit only forgets the thread.
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/trace_replay.h"

namespace schedcache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Describe writes one event as text, for readable expectations.
std::string Describe(const Event& event) {
  if (const Sample* s = std::get_if<Sample>(&event)) {
    return absl::StrCat("sample ", s->timestamp_ns, " cpu ", s->cpu, " ",
                        s->tgid, "/", s->tid, " ran ", s->delta_ns,
                        s->tick ? " tick" : " out", " threads ",
                        s->nr_threads);
  }
  if (const HandOver* h = std::get_if<HandOver>(&event)) {
    return absl::StrCat("hand-over ", h->timestamp_ns, " cpu ", h->cpu, " ",
                        h->tgid, "/", h->tid);
  }
  const ProcessExit& e = std::get<ProcessExit>(event);
  return absl::StrCat("exit ", e.timestamp_ns, " ", e.tgid);
}

std::vector<std::string> Replayed(std::string_view text) {
  RecordingSink sink;
  const absl::StatusOr<ReplayStats> stats =
      ReplayTraceText(text, TraceOptions{}, sink);
  EXPECT_TRUE(stats.ok()) << stats.status();
  std::vector<std::string> out;
  for (const Event& event : sink.events()) out.push_back(Describe(event));
  return out;
}

// Process 100 has threads 100 (the leader, CPU 0) and 101 (CPU 1). The
// first two lines are switches out of each, so their TGID column files
// both under 100 before they run (nothing is accounted: neither CPU was
// known). 101 exits and switches out; then 100 does; then 200, a leader the
// replay never saw running, exits. All of it lies before the first tick at
// HZ 250 (10.004 s), so no tick interleaves.
constexpr char kExits[] = R"(# tracer: nop
             srv-100     (    100) [000] d..2.    10.000000: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120
          srv-io-101     (    100) [001] d..2.    10.000000: sched_switch: prev_comm=srv-io prev_pid=101 prev_prio=120 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120
          <idle>-0       (-------) [000] d..2.    10.000100: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
          <idle>-0       (-------) [001] d..2.    10.000200: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv-io next_pid=101 next_prio=120
          srv-io-101     (    100) [001] .....    10.000700: sched_process_exit: comm=srv-io pid=101 prio=120 group_dead=false
          srv-io-101     (    100) [001] d..2.    10.000800: sched_switch: prev_comm=srv-io prev_pid=101 prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120
             srv-100     (    100) [000] .....    10.001000: sched_process_exit: comm=srv pid=100 prio=120 group_dead=true
             srv-100     (    100) [000] d..2.    10.001200: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
          worker-200     (    200) [001] .....    10.001500: sched_process_exit: comm=worker pid=200 prio=120 group_dead=true
)";

TEST(TraceReplayExit, ALeaderEndsItsProcessAfterItsLastSwitchOut) {
  // Derivation, times in ns past 10 s (10'000'000'000):
  //  - the two first switches leave CPUs 0 and 1 idle: hand-overs to 0/0;
  //  - 100 and 101 are switched in at +100'000 and +200'000;
  //  - 101's exit emits nothing; its switch-out at +800'000 accounts
  //    800'000 - 200'000 = 600'000 ns, with 1 live thread (100; 101 has
  //    exited), and it is forgotten without a ProcessExit: not a leader;
  //  - 100's exit waits for its switch-out at +1'200'000, which accounts
  //    1'200'000 - 100'000 = 1'100'000 ns (threads: none live, at least
  //    1 as it still runs); ProcessExit follows at the same time, before
  //    the hand-over, so no event names 100 after its exit;
  //  - 200 is not running, so its exit is a ProcessExit at once.
  EXPECT_THAT(
      Replayed(kExits),
      ElementsAre("hand-over 10000000000 cpu 0 0/0",
                  "hand-over 10000000000 cpu 1 0/0",
                  "hand-over 10000100000 cpu 0 100/100",
                  "hand-over 10000200000 cpu 1 100/101",
                  "sample 10000800000 cpu 1 100/101 ran 600000 out threads 1",
                  "hand-over 10000800000 cpu 1 0/0",
                  "sample 10001200000 cpu 0 100/100 ran 1100000 out threads 1",
                  "exit 10001200000 100",
                  "hand-over 10001200000 cpu 0 0/0",
                  "exit 10001500000 200"));
}

// Leader 100 exits at +500 us while running on CPU 0, is preempted at +600
// (prev_state=R+: the kernel may run a dying task again), runs again from
// +700 and leaves dead (X) at +900.
constexpr char kPreemptedAfterExit[] = R"(
          <idle>-0       (-------) [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
             srv-100     (    100) [000] .....    10.000500: sched_process_exit: comm=srv pid=100 prio=120 group_dead=true
             srv-100     (    100) [000] d..2.    10.000600: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       (-------) [000] d..2.    10.000700: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=srv next_pid=100 next_prio=120
             srv-100     (    100) [000] d..2.    10.000900: sched_switch: prev_comm=srv prev_pid=100 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";

TEST(TraceReplayExit, ALeaderPreemptedAfterItsExitEndsAtItsDeadSwitchOut) {
  // Derivation, ns past 10 s: 100 runs 0..600'000 (sample of 600'000, one
  // thread counted as it still runs), is handed back at +700'000 as the
  // same process (the tgid 100 it kept, not a new admission), runs
  // 700'000..900'000 (200'000) and its process ends at the X switch-out.
  // Were R+ read as the last switch-out, the exit would come at +600'000
  // and 100 would be admitted again at +700'000.
  EXPECT_THAT(
      Replayed(kPreemptedAfterExit),
      ElementsAre("hand-over 10000000000 cpu 0 100/100",
                  "sample 10000600000 cpu 0 100/100 ran 600000 out threads 1",
                  "hand-over 10000600000 cpu 0 0/0",
                  "hand-over 10000700000 cpu 0 100/100",
                  "sample 10000900000 cpu 0 100/100 ran 200000 out threads 1",
                  "exit 10000900000 100",
                  "hand-over 10000900000 cpu 0 0/0"));
}

TEST(TraceReplayExit, WithoutATgidNoExitEndsAProcess) {
  // No TGID column: the replay cannot tell a leader, so pid 300's exit only
  // forgets the thread.
  constexpr char kNoTgid[] = R"(
          <idle>-0       [000] d..2.    10.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=job next_pid=300 next_prio=120
             job-300     [000] .....    10.000500: sched_process_exit: comm=job pid=300 prio=120 group_dead=true
             job-300     [000] d..2.    10.000600: sched_switch: prev_comm=job prev_pid=300 prev_prio=120 prev_state=X ==> next_comm=swapper/0 next_pid=0 next_prio=120
)";
  std::vector<std::string> events = Replayed(kNoTgid);
  EXPECT_THAT(events, ElementsAre("hand-over 10000000000 cpu 0 300/300",
                                  "sample 10000600000 cpu 0 300/300 ran "
                                  "600000 out threads 1",
                                  "hand-over 10000600000 cpu 0 0/0"));
}

}  // namespace
}  // namespace schedcache
