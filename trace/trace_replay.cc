#include "trace/trace_replay.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "events/sched_state_machine.h"
#include "trace/line_reader.h"
#include "trace/quoted_input.h"
#include "trace/trace_line.h"

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

// TraceReplayer feeds parsed lines to a SchedStateMachine and keeps stats.
class TraceReplayer {
 public:
  TraceReplayer(const TraceOptions& options, EventSink& sink)
      : options_(options), sink_(sink), machine_(options.hz, sink) {}

  absl::Status ReplayLine(std::string_view text) {
    ++stats_.lines;
    TraceLine line = ParseTraceLine(text);
    if (line.kind == Kind::kNotScheduler) return absl::OkStatus();
    if (line.kind == Kind::kMalformed) {
      CountMalformed(line.error, text);
      return absl::OkStatus();
    }
    // Every scheduler line counts for the order, not only the replayed ones:
    // an earlier line far ahead (a wakeup, say) has moved the end of the
    // replay there, and a line before it would make every running thread
    // tick all the way up to it.
    if (seen_any_ && line.timestamp_ns < stats_.last_timestamp_ns) {
      CountMalformed("timestamp is before the previous scheduler event", text);
      return absl::OkStatus();
    }
    // Trace timestamps are below 10^18 ns (9 digits of seconds), so the
    // difference cannot overflow.
    if (seen_any_ &&
        line.timestamp_ns - stats_.last_timestamp_ns > kMaxTraceGapNs) {
      CountMalformed("timestamp jumps more than 3600 s past the previous "
                     "scheduler event (a corrupted timestamp?)",
                     text);
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

    ASSIGN_OR_RETURN(const int32_t cpu, MapCpu(line.cpu));
    sink_.OnInputLine(stats_.lines);
    ++stats_.sched_events;
    stats_.cpus_seen.Set(cpu);
    switch (line.kind) {
      case Kind::kSwitch:
        ++stats_.switch_events;
        return machine_.Switch(SwitchEvent{
            line.timestamp_ns, cpu, line.prev_pid, line.task_tgid,
            line.prev_comm, line.next_pid, /*next_tgid=*/0, line.next_comm});
      case Kind::kExit:
        ++stats_.exit_events;
        if (line.pid > 0) machine_.threads().Learn(line.pid, 0, line.comm);
        return machine_.Exit(line.timestamp_ns, line.pid);
      case Kind::kMigrate:
        ++stats_.migrate_events;
        RETURN_IF_ERROR(MapCpu(line.orig_cpu).status());
        RETURN_IF_ERROR(MapCpu(line.dest_cpu).status());
        return machine_.AdvanceTo(line.timestamp_ns);
      default:
        return absl::OkStatus();
    }
  }

  absl::StatusOr<ReplayStats> Finish() && {
    if (seen_any_) RETURN_IF_ERROR(machine_.Finish(stats_.last_timestamp_ns));
    const SchedCounters& c = machine_.counters();
    stats_.samples = c.samples;
    stats_.tick_samples = c.tick_samples;
    stats_.hand_overs = c.hand_overs;
    stats_.process_exits = c.process_exits;
    stats_.prev_mismatches = c.prev_mismatches;
    stats_.moved_running_threads = c.moved_running_threads;
    stats_.guessed_tgid_hand_overs = c.guessed_tgid_hand_overs;
    stats_.runtime_ns = machine_.runtime_ns();
    if (!stats_.cpus_seen.Empty()) {
      stats_.runtime_ns.resize(stats_.cpus_seen.Last() + 1, 0);
    }
    return std::move(stats_);
  }

 private:
  // MapCpu applies the cpu map and checks the result against the topology.
  absl::StatusOr<int32_t> MapCpu(int32_t trace_cpu) const {
    const int cpu = options_.cpu_map.Map(trace_cpu);
    const bool outside = options_.topology != nullptr
                             ? !options_.topology->HasCpu(cpu)
                             : cpu > CpuMap::kMaxCpu;
    if (outside) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", stats_.lines, ": trace cpu ", trace_cpu,
          trace_cpu != cpu ? absl::StrCat(" (mapped to ", cpu, ")") : "",
          " is not a cpu of the topology",
          options_.topology != nullptr
              ? absl::StrCat(" '", options_.topology->source(), "'")
              : "",
          "; map it onto one with a cpu map (--cpu-map FROM=TO,...)"));
    }
    return cpu;
  }

  void CountMalformed(std::string_view error, std::string_view text) {
    ++stats_.malformed_lines;
    if (stats_.first_malformed.size() < ReplayStats::kKeptMalformed) {
      stats_.first_malformed.push_back(MalformedLine{
          stats_.lines, std::string(error),
          QuoteInput(absl::string_view(text.data(), text.size()))});
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
  TraceReplayer replayer(options, sink);
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
  ASSIGN_OR_RETURN(LineReader reader, LineReader::Open(path));
  return Replay(reader, options, sink);
}

absl::StatusOr<ReplayStats> ReplayTraceText(std::string_view text,
                                            const TraceOptions& options,
                                            EventSink& sink) {
  LineReader reader = LineReader::FromText(text, "trace text");
  return Replay(reader, options, sink);
}

}  // namespace schedcache
