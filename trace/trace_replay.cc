#include "trace/trace_replay.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "common/model_defaults.h"
#include "common/status_macros.h"
#include "events/sched_state_machine.h"
#include "events/thread_table.h"
#include "trace/cgroup_path.h"
#include "trace/line_reader.h"
#include "trace/quoted_input.h"
#include "trace/trace_dat.h"
#include "trace/trace_line.h"

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

// DescribeRecord is what a malformed record of a trace-cmd file is shown
// as, in place of its text: "[001] 5.000000042: sched_switch record".
std::string DescribeRecord(const TraceLine& record) {
  constexpr int64_t kNsPerSecond = 1'000'000'000;
  const char* event = "record";
  switch (record.kind) {
    case Kind::kSwitch:
      event = "sched_switch record";
      break;
    case Kind::kMigrate:
      event = "sched_migrate_task record";
      break;
    case Kind::kExit:
      event = "sched_process_exit record";
      break;
    default:
      break;
  }
  return absl::StrCat(
      "[", absl::Dec(record.cpu, absl::kZeroPad3), "] ",
      record.timestamp_ns / kNsPerSecond, ".",
      absl::Dec(record.timestamp_ns % kNsPerSecond, absl::kZeroPad9), ": ",
      event);
}

// TraceReplayer feeds parsed lines, or records of a trace-cmd file (each
// counting as a line), to a SchedStateMachine and keeps stats.
class TraceReplayer {
 public:
  TraceReplayer(const TraceOptions& options, EventSink& sink, bool trace_dat)
      : options_(options), sink_(sink), machine_(options.hz, sink, options.tick_anchor_ns) {
    stats_.trace_dat = trace_dat;
  }

  // ReplayLine replays one line of trace text.
  absl::Status ReplayLine(std::string_view text) {
    return Replay(ParseTraceLine(text), [text] {
      return QuoteInput(absl::string_view(text.data(), text.size()));
    });
  }

  // ReplayRecord replays one record of a trace-cmd file.
  absl::Status ReplayRecord(const TraceLine& record) {
    return Replay(record, [&record] { return DescribeRecord(record); });
  }

  absl::StatusOr<ReplayStats> Finish() && {
    if (seen_any_) RETURN_IF_ERROR(machine_.Finish(stats_.last_timestamp_ns));
    const SchedCounters& c = machine_.counters();
    stats_.samples = c.samples;
    stats_.tick_samples = c.tick_samples;
    stats_.hand_overs = c.hand_overs;
    stats_.process_exits = c.process_exits;
    stats_.process_starts = c.process_starts;
    stats_.prev_mismatches = c.prev_mismatches;
    stats_.moved_running_threads = c.moved_running_threads;
    stats_.guessed_tgid_hand_overs = c.guessed_tgid_hand_overs;
    stats_.unmatched_ticks = c.unmatched_ticks;
    stats_.runtime_ns = machine_.runtime_ns();
    if (!stats_.cpus_seen.Empty()) {
      stats_.runtime_ns.resize(stats_.cpus_seen.Last() + 1, 0);
    }
    return std::move(stats_);
  }

 private:
  // Replay replays one line or record; `show` makes the text that a
  // malformed one is kept with.
  absl::Status Replay(const TraceLine& line,
                      absl::FunctionRef<std::string()> show) {
    ++stats_.lines;
    if (line.kind == Kind::kNotScheduler) return absl::OkStatus();
    if (line.kind == Kind::kKernelClock) {
      if (stats_.kernel_clock) {
        CountMalformed("a second schedcache_kernel_clock line", show);
      } else {
        stats_.kernel_clock = line.clock;
      }
      return absl::OkStatus();
    }
    if (line.kind == Kind::kCgroup) {
      ReplayCgroup(line, show);
      return absl::OkStatus();
    }
    if (line.kind == Kind::kMalformed) {
      CountMalformed(line.error, show);
      return absl::OkStatus();
    }
    // Every scheduler line counts for the order, not only the replayed ones:
    // an earlier line far ahead (a wakeup, say) has moved the end of the
    // replay there, and a line before it would make every running thread
    // tick all the way up to it.
    if (seen_any_ && line.timestamp_ns < stats_.last_timestamp_ns) {
      CountMalformed("timestamp is before the previous scheduler event", show);
      return absl::OkStatus();
    }
    // Trace timestamps are below 10^18 ns (9 digits of seconds), so the
    // difference cannot overflow.
    if (seen_any_ &&
        line.timestamp_ns - stats_.last_timestamp_ns > kMaxClockJumpNs) {
      CountMalformed(absl::StrCat("timestamp jumps more than ",
                                  kMaxClockJumpNs / 1'000'000'000,
                                  " s past the previous scheduler event (a "
                                  "corrupted timestamp?)"),
                     show);
      return absl::OkStatus();
    }
    if (!seen_any_) {
      seen_any_ = true;
      stats_.first_timestamp_ns = line.timestamp_ns;
    }
    stats_.last_timestamp_ns =
        std::max(stats_.last_timestamp_ns, line.timestamp_ns);
    // The TGID column names the process of the task running the event.
    if (line.task_pid > 0 && line.task_tgid > 0) {
      machine_.threads().Learn(line.task_pid, line.task_tgid, {});
    }
    if (line.kind == Kind::kOtherSched) return absl::OkStatus();
    if (line.kind == Kind::kNewTask || line.kind == Kind::kExec) {
      return LearnProcess(line);
    }

    ASSIGN_OR_RETURN(const int32_t cpu, MapCpu(line.cpu));
    sink_.OnInputLine(stats_.lines);
    ++stats_.sched_events;
    stats_.cpus_seen.Set(cpu);
    switch (line.kind) {
      case Kind::kSwitch:
        ++stats_.switch_events;
        return machine_.Switch(SwitchEvent{
            line.timestamp_ns, cpu, line.prev_pid, line.task_tgid,
            line.prev_comm, line.next_pid, /*next_tgid=*/0, line.next_comm,
            line.prev_runnable});
      case Kind::kExit:
        ++stats_.exit_events;
        if (line.pid > 0) machine_.threads().Learn(line.pid, 0, line.comm);
        return machine_.Exit(line.timestamp_ns, line.pid);
      case Kind::kMigrate:
        ++stats_.migrate_events;
        RETURN_IF_ERROR(MapCpu(line.orig_cpu).status());
        RETURN_IF_ERROR(MapCpu(line.dest_cpu).status());
        return machine_.AdvanceTo(line.timestamp_ns);
      case Kind::kKernelDecision:
        return ReplayDecision(line, cpu);
      case Kind::kKernelTick:
        return ReplayTick(line, cpu);
      default:
        return absl::OkStatus();
    }
  }

  // LearnProcess takes what a task_newtask or sched_process_exec line says
  // about processes (trace_replay.h), and starts the group of a process
  // that got a new address space; it changes no CPU.
  absl::Status LearnProcess(const TraceLine& line) {
    ThreadTable& threads = machine_.threads();
    sink_.OnInputLine(stats_.lines);
    if (line.kind == Kind::kNewTask) {
      ++stats_.new_task_events;
      // The header's TGID column, learned above, is the creator's process.
      const ThreadInfo* creator =
          line.task_pid > 0 ? threads.Find(line.task_pid) : nullptr;
      threads.LearnNewTask(
          line.pid, line.clone_flags,
          creator != nullptr && creator->tgid_known ? creator->tgid : 0,
          line.comm);
      if (!NewTaskStartsGroup(line.clone_flags)) return absl::OkStatus();
      return machine_.StartProcess(line.timestamp_ns, line.pid);
    }
    ++stats_.exec_events;
    // After an exec the task leads its thread group: its pid is the tgid.
    threads.Learn(line.pid, line.pid, ExecComm(line.filename));
    return machine_.StartProcess(line.timestamp_ns, line.pid);
  }

  // ReplayCgroup hands a process's cgroup path to options.on_cgroup.
  void ReplayCgroup(const TraceLine& line,
                    absl::FunctionRef<std::string()> show) {
    const std::optional<std::string> path =
        UnescapeCgroupPath(line.cgroup_path);
    if (!path) {
      CountMalformed(
          "schedcache_cgroup: PATH has a byte that should be escaped or a "
          "backslash not followed by three octal digits",
          show);
      return;
    }
    ++stats_.cgroup_lines;
    if (options_.on_cgroup) options_.on_cgroup(line.pid, *path);
  }

  // ReplayDecision hands one kernel decision to the sink, after the ticks
  // before it, with its CPUs mapped (`cpu`: the work's, mapped already).
  absl::Status ReplayDecision(const TraceLine& line, int32_t cpu) {
    ++stats_.kernel_decisions;
    KernelDecision decision = line.decision;
    decision.cpu = cpu;
    if (decision.preferred_cpu >= 0) {
      ASSIGN_OR_RETURN(decision.preferred_cpu, MapCpu(decision.preferred_cpu));
    }
    RETURN_IF_ERROR(machine_.AdvanceTo(line.timestamp_ns));
    // task_cache_work returned: its thread is back in user space.
    RETURN_IF_ERROR(machine_.ReturnToUser(cpu));
    return sink_.OnKernelDecision(decision);
  }

  // ReplayTick ticks where the kernel ticked (`cpu`: mapped already). The
  // first tick line ends the synthetic grid, after its ticks before it.
  absl::Status ReplayTick(const TraceLine& line, int32_t cpu) {
    if (stats_.kernel_ticks++ == 0) {
      RETURN_IF_ERROR(machine_.AdvanceTo(line.timestamp_ns));
      machine_.UseRecordedTicks();
    }
    KernelTick tick = line.tick;
    tick.cpu = cpu;
    tick.numa_node = ReplayableNode(tick.numa_node);
    return machine_.Tick(tick);
  }

  // ReplayableNode is a tick's preferred node where the replay's topology
  // has it online, and otherwise unknown (counted): a node of the
  // recording machine means nothing on another topology.
  int32_t ReplayableNode(int32_t node) {
    if (node < 0 || options_.topology == nullptr) return node;
    for (const CpuGroup& group : options_.topology->numa_nodes()) {
      if (group.id == node &&
          group.cpus.Intersects(options_.topology->online_cpus())) {
        return node;
      }
    }
    ++stats_.foreign_numa_nodes;
    return kUnchangedNumaNode;
  }

  // MapCpu applies the cpu map and checks the result against the topology.
  absl::StatusOr<int32_t> MapCpu(int32_t trace_cpu) const {
    const int cpu = options_.cpu_map.Map(trace_cpu);
    const bool outside = options_.topology != nullptr
                             ? !options_.topology->HasCpu(cpu)
                             : cpu > CpuMap::kMaxCpu;
    if (outside) {
      return absl::InvalidArgumentError(absl::StrCat(
          stats_.trace_dat ? "record " : "line ", stats_.lines,
          ": trace cpu ", trace_cpu,
          trace_cpu != cpu ? absl::StrCat(" (mapped to ", cpu, ")") : "",
          " is not a cpu of the topology",
          options_.topology != nullptr
              ? absl::StrCat(" '", options_.topology->source(), "'")
              : "",
          "; map it onto one with a cpu map (--cpu-map FROM=TO,...)"));
    }
    return cpu;
  }

  void CountMalformed(std::string_view error,
                      absl::FunctionRef<std::string()> show) {
    ++stats_.malformed_lines;
    if (stats_.first_malformed.size() < ReplayStats::kKeptMalformed) {
      stats_.first_malformed.push_back(
          MalformedLine{stats_.lines, std::string(error), show()});
    }
  }

  const TraceOptions& options_;
  EventSink& sink_;
  SchedStateMachine machine_;
  ReplayStats stats_;
  bool seen_any_ = false;
};

// Replay replays every line of `reader`.
absl::StatusOr<ReplayStats> Replay(LineReader& reader,
                                   const TraceOptions& options,
                                   EventSink& sink) {
  TraceReplayer replayer(options, sink, /*trace_dat=*/false);
  while (true) {
    ASSIGN_OR_RETURN(std::optional<std::string_view> line, reader.NextLine());
    if (!line) break;
    RETURN_IF_ERROR(replayer.ReplayLine(*line));
  }
  return std::move(replayer).Finish();
}

}  // namespace

absl::StatusOr<ReplayStats> ReplayTraceFile(absl::string_view path,
                                            const TraceOptions& options,
                                            EventSink& sink) {
  if (HasTraceDatMagic(path)) {
    TraceReplayer replayer(options, sink, /*trace_dat=*/true);
    RETURN_IF_ERROR(ReadTraceDat(path, [&replayer](const TraceLine& record) {
      return replayer.ReplayRecord(record);
    }));
    return std::move(replayer).Finish();
  }
  ASSIGN_OR_RETURN(LineReader reader, LineReader::Open(path));
  return Replay(reader, options, sink);
}

absl::StatusOr<std::optional<KernelClock>> ReadKernelClock(
    absl::string_view path) {
  if (path == "-" || HasTraceDatMagic(path)) return std::nullopt;
  ASSIGN_OR_RETURN(LineReader reader, LineReader::Open(path));
  while (true) {
    ASSIGN_OR_RETURN(std::optional<std::string_view> line, reader.NextLine());
    if (!line) return std::nullopt;
    const TraceLine parsed = ParseTraceLine(*line);
    if (parsed.kind == TraceLine::Kind::kKernelClock) return parsed.clock;
    if (parsed.kind != TraceLine::Kind::kNotScheduler &&
        parsed.kind != TraceLine::Kind::kCgroup) {
      return std::nullopt;
    }
  }
}

absl::StatusOr<ReplayStats> ReplayTraceText(std::string_view text,
                                            const TraceOptions& options,
                                            EventSink& sink) {
  LineReader reader = LineReader::FromText(text, "trace text");
  return Replay(reader, options, sink);
}

}  // namespace schedcache
