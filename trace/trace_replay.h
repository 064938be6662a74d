// Trace replay: turns a recorded scheduler trace (ftrace text with or without
// the tgid column, `trace-cmd report` or `perf script` text, per line as
// trace_line.h tells them apart; plain or gzip; or a trace-cmd .dat file,
// told apart by its magic bytes and read record by record as trace_dat.h
// says) into the model's Samples, HandOvers, ProcessStarts and
// ProcessExits, in time
// order, through an EventSink. A .dat file replays exactly as the
// `trace-cmd report -t` text of it does (-t: nanosecond timestamps); each
// of its records counts as a line.
//
// What is used: sched_switch (accounting and hand-overs, through
// SchedStateMachine: see sched_state_machine.h for the tick grid and how
// runtime is cut into samples), sched_process_exit (the thread stops
// counting in its process's nr_threads; a group leader's, where the trace
// knows its tgid, ends the process with a ProcessExit), sched_migrate_task
// (counted; a
// migration of a waiting thread changes no CPU's current thread). The TGID
// column of every scheduler line teaches which process a pid belongs to, and
// task_newtask the process of each task from its creation (a CLONE_THREAD
// task joins its creator's, any other is its own: ThreadTable::LearnNewTask);
// a pid whose tgid was never shown uses its own pid. sched_process_exec
// gives the process the exec'd program's comm (ExecComm); both are counted.
// A task_newtask without CLONE_VM (NewTaskStartsGroup) and every
// sched_process_exec start the process's group: a ProcessStart goes out
// (SchedStateMachine::StartProcess). Other lines are skipped;
// a line naming one of the three events that does not parse, or whose time
// goes backwards, is counted as malformed and skipped (the first few are
// kept with their line numbers).
//
// schedcache's own lines (trace_line.h): each schedcache_task_cache_work
// line goes to sink.OnKernelDecision in its place in time, after the ticks
// before it (it changes no thread: the kernel's decision is not a switch),
// its CPU and preferred CPU through the cpu map; the
// `# schedcache_kernel_clock:` comment is kept in the stats (a second one
// is malformed). Each `# schedcache_cgroup: TGID PATH` comment (written by
// `schedcache record`, docs/LIVE.md) goes to options.on_cgroup, in its place
// among the events: record writes it before the first line of the process
// and again after its exec, so a listener knows a process's path before its
// samples; a line that does not parse (trace_line.h, trace/cgroup_path.h)
// is malformed. A .dat file carries no cgroup path (trace-cmd records
// none). Each schedcache_sched_tick line is a tick of the kernel:
// from the first one on, the synthetic tick grid stops and the running
// thread is ticked where the kernel ticked (SchedStateMachine, "Recorded
// ticks"), and the line's jiffies become the model's (Sample::jiffies); a
// capture without them keeps the grid and the clock anchor's jiffies.
//
// Time jumps: a scheduler line more than kMaxClockJumpNs (3600 s,
// common/model_defaults.h) after the latest one before it is malformed
// too. No real trace goes an hour without a context switch, but one
// corrupted digit of the seconds does, and replaying it would tick every
// running thread through the whole gap (1/HZ apart); the engine's
// max_clock_jump_ns (the same default) would refuse it.
//
// Streaming: one pass through LineReader (line_reader.h: the line limit,
// gzip, truncated files), memory bounded by CPUs and live threads.
//
// Thread contract: each call is independent; the sink is called from the
// calling thread only.
#ifndef SCHEDCACHE_TRACE_TRACE_REPLAY_H_
#define SCHEDCACHE_TRACE_TRACE_REPLAY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/model_defaults.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "topology/cpu_set.h"
#include "topology/topology.h"
#include "trace/cpu_map.h"

namespace schedcache {

struct TraceOptions {
  // hz is the scheduler tick rate: ticks every 1e9 / hz ns (kernel CONFIG_HZ).
  int hz = kDefaultHz;
  // tick_anchor_ns is a time at which a jiffy began (the model's
  // clock_anchor_ns, docs/MODEL.md): ticks fall at tick_anchor_ns + k * 1e9
  // / hz, where the recording kernel's did. In [0, 2^62].
  int64_t tick_anchor_ns = 0;
  // cpu_map renames trace CPUs before the topology check (see cpu_map.h).
  CpuMap cpu_map;
  // topology, when set (not owned; must outlive the call), makes a trace
  // CPU that maps outside it an error.
  const Topology* topology = nullptr;
  // on_cgroup, when set, hears each `# schedcache_cgroup:` line: process
  // `tgid` is in cgroup `path` (unescaped) from here on.
  std::function<void(int32_t tgid, std::string_view path)> on_cgroup;
};

// MalformedLine is one malformed line kept for the user.
struct MalformedLine {
  int64_t line_number = 0;  // 1-based (of a .dat: the record's number)
  std::string error;
  std::string text;  // the line as QuoteInput shows it (escaped, cut)
};

// ReplayStats says what a replay read and emitted.
struct ReplayStats {
  static constexpr size_t kKeptMalformed = 5;

  bool trace_dat = false;  // read from a trace-cmd .dat: lines are records
  int64_t lines = 0;
  int64_t sched_events = 0;  // switch, migrate, exit, decision, tick lines
  int64_t switch_events = 0;
  int64_t migrate_events = 0;
  int64_t exit_events = 0;
  int64_t new_task_events = 0;  // task_newtask lines
  int64_t exec_events = 0;      // sched_process_exec lines
  int64_t kernel_decisions = 0;  // schedcache_task_cache_work lines used
  int64_t kernel_ticks = 0;      // schedcache_sched_tick lines used
  // tick lines whose numa_preferred_nid is no online node of the replay's
  // topology (a capture replayed on another machine): the tick's Sample
  // goes without it (docs/MODEL.md, The model against the running kernel).
  int64_t foreign_numa_nodes = 0;
  // The capture's `# schedcache_kernel_clock:` line, when it has one.
  std::optional<KernelClock> kernel_clock;
  int64_t cgroup_lines = 0;  // `# schedcache_cgroup:` lines used
  int64_t malformed_lines = 0;
  std::vector<MalformedLine> first_malformed;  // at most kKeptMalformed
  int64_t samples = 0;  // ticks included
  int64_t tick_samples = 0;
  int64_t hand_overs = 0;
  int64_t process_exits = 0;          // ProcessExit events emitted
  int64_t process_starts = 0;         // ProcessStart events emitted
  int64_t prev_mismatches = 0;        // see SchedCounters
  int64_t moved_running_threads = 0;  // see SchedCounters
  int64_t guessed_tgid_hand_overs = 0;  // see SchedCounters
  int64_t unmatched_ticks = 0;          // see SchedCounters
  // runtime_ns[cpu]: sum of the delta_ns of the samples on topology CPU
  // `cpu` (after the cpu map); sized max CPU seen + 1.
  std::vector<int64_t> runtime_ns;
  CpuSet cpus_seen;  // topology CPUs (after the cpu map) of used events
  int64_t first_timestamp_ns = 0;  // of the first scheduler line
  int64_t last_timestamp_ns = 0;   // of the last; ticks run up to it
};

// ReplayTraceFile replays the trace at `path` ("-": standard input, which
// is read as text), plain or gzip text or a trace-cmd .dat file, calling
// sink.OnInputLine before the events of each line. Returns LineReader's
// errors (NotFound/PermissionDenied when it cannot be opened,
// InvalidArgument for a directory, DataLoss for a truncated or corrupt gzip
// file or a read error, OutOfRange for a line over the limit), those of
// ReadTraceDat for a .dat file (DataLoss for a truncated or corrupt one,
// FailedPrecondition for one without the sched event formats),
// InvalidArgument (naming the line and CPU) when a CPU is outside
// options.topology after the cpu map, or the sink's error. A trace without a
// single scheduler event replays to empty stats (sched_events 0); callers
// that need events say so.
absl::StatusOr<ReplayStats> ReplayTraceFile(absl::string_view path,
                                            const TraceOptions& options,
                                            EventSink& sink);

// ReadKernelClock returns the capture's `# schedcache_kernel_clock:` line
// when one comes before its first scheduler event (record writes it first),
// so a caller can set the model's clock before the replay starts; nullopt
// when there is none, for standard input ("-": it can be read only once)
// and for a .dat file (which never carries one). Returns the opening and
// reading errors of ReplayTraceFile.
absl::StatusOr<std::optional<KernelClock>> ReadKernelClock(
    absl::string_view path);

// ReplayTraceText replays a trace held in memory (plain text), with the same
// results as ReplayTraceFile on a file holding `text`.
absl::StatusOr<ReplayStats> ReplayTraceText(std::string_view text,
                                            const TraceOptions& options,
                                            EventSink& sink);

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_TRACE_REPLAY_H_
