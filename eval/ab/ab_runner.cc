#include "eval/ab/ab_runner.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "eval/ab/ab_collector.h"
#include "eval/ab/cache_groups.h"
#include "eval/ab/event_feed.h"
#include "eval/ab/in_process_session.h"
#include "eval/report/perfetto_trace.h"
#include "eval/report/scan_trace.h"
#include "trace/cpu_map.h"
#include "trace/line_reader.h"
#include "trace/sample_csv.h"
#include "trace/trace_replay.h"

namespace schedcache::ab {
namespace {

// ReferencePlacement is the workload's model of its own machine's
// scheduler: an engine with the session's first policy only, whose
// preferred LLC per process steers the generator's placement.
class ReferencePlacement : public EventSink {
 public:
  static absl::StatusOr<std::unique_ptr<ReferencePlacement>> Create(
      std::shared_ptr<const Topology> topology, SessionSettings settings,
      const PolicyRegistry& registry) {
    settings.policies.resize(1);
    ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                     Engine::Create(std::move(topology), registry,
                                    std::move(settings.policies),
                                    settings.options));
    auto placement = std::unique_ptr<ReferencePlacement>(
        new ReferencePlacement(std::move(engine)));
    ReferencePlacement* self = placement.get();
    self->engine_->SetChangeListener([self](const PreferenceChange& change) {
      self->llc_of_[change.tgid] = change.new_llc;
    });
    return placement;
  }

  absl::Status OnSample(const Sample& sample) override {
    return engine_->ApplySample(sample);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return engine_->ApplyHandOver(hand_over);
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return engine_->ApplyProcessExit(exit);
  }
  absl::Status OnProcessStart(const ProcessStart& start) override {
    return engine_->ApplyProcessStart(start);
  }
  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    return engine_->ApplyKernelDecision(decision);
  }

  PreferredLlcFn Fn() {
    return [this](int32_t tgid) {
      auto it = llc_of_.find(tgid);
      return it == llc_of_.end() ? -1 : it->second;
    };
  }

 private:
  explicit ReferencePlacement(std::unique_ptr<Engine> engine)
      : engine_(std::move(engine)) {}

  std::unique_ptr<Engine> engine_;
  absl::flat_hash_map<int32_t, int> llc_of_;  // tgid -> preferred LLC
};

// FeedTrace replays the trace, its ticks at the start of the model's
// jiffies (`model`: the session's tunables), its cgroup paths to `sink`. A
// trace without one scheduler event or malformed line is not a trace
// replay can use, nor one without a cgroup path for a rule that needs
// them: an error that says so.
absl::Status FeedTrace(const AbOptions& options, const ModelTunables& model,
                       const Topology& topology, CacheGroupingSink& sink,
                       InputProblems& problems) {
  TraceOptions trace;
  trace.hz = options.hz;
  trace.tick_anchor_ns = model.clock_anchor_ns;
  trace.cpu_map = options.cpu_map;
  trace.topology = &topology;
  trace.on_cgroup = [&sink](int32_t tgid, std::string_view path) {
    sink.OnCgroup(tgid, absl::string_view(path.data(), path.size()));
  };
  ASSIGN_OR_RETURN(const ReplayStats stats,
                   ReplayTraceFile(options.input.path, trace, sink));
  if (stats.sched_events == 0 && stats.malformed_lines == 0) {
    const std::string& path = options.input.path;
    if (stats.trace_dat) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trace-cmd file '", path, "' has no sched_switch, "
          "sched_migrate_task or sched_process_exit record in its ",
          stats.lines, " records: were the sched events enabled on the "
          "buffer it was extracted from?"));
    }
    return absl::InvalidArgumentError(
        stats.lines == 0
            ? absl::StrCat("trace '", path, "' is empty")
            : absl::StrCat("trace '", path, "' has no ",
                           "sched_switch, sched_migrate_task or "
                           "sched_process_exit line in its ", stats.lines,
                           " lines: is it ftrace, `trace-cmd report` or "
                           "`perf script` text, or a trace-cmd .dat file?"));
  }
  if (NeedsCgroupPaths(options.group_by) && stats.cgroup_lines == 0) {
    return CgroupPathsMissing(
        options.group_by, absl::StrCat("trace:", options.input.path),
        stats.trace_dat ? "trace-cmd records no cgroup path in a .dat file"
                        : "it has no `# schedcache_cgroup:` line");
  }
  for (const MalformedLine& line : stats.first_malformed) {
    problems.Add(line.line_number,
                 absl::StrCat("line ", line.line_number, ": ", line.error,
                              ": ", line.text));
  }
  problems.AddUnlisted(stats.malformed_lines - stats.first_malformed.size());
  return absl::OkStatus();
}

// FeedCsv reads the sample CSV. Up to the header a bad line stops the run
// (the file is most likely not a sample CSV); after it each bad row is
// counted and skipped, and so is each row the session refuses, as
// `schedcache feed` does. A read error (a truncated gzip file, a line over
// the limit) stops the run.
absl::Status FeedCsv(const AbOptions& options, const EventFeed& feed,
                     EventSink& sink, InputProblems& problems) {
  ASSIGN_OR_RETURN(LineReader lines, LineReader::Open(options.input.path));
  SampleCsvReader reader(lines);
  const CpuMap& cpu_map = options.cpu_map;
  while (true) {
    absl::StatusOr<std::optional<CsvEvent>> next = reader.Next();
    if (!next.ok()) {
      if (!reader.header_seen() || !absl::IsInvalidArgument(next.status())) {
        return next.status();
      }
      problems.Add(reader.line(), std::string(next.status().message()));
      continue;
    }
    if (!next->has_value()) break;
    sink.OnInputLine(reader.line());
    RETURN_IF_ERROR(std::visit(
        [&](auto& e) -> absl::Status {
          using Kind = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<Kind, ProcessExit>) {
            return sink.OnProcessExit(e);  // names no CPU
          } else if constexpr (std::is_same_v<Kind, ProcessStart>) {
            return sink.OnProcessStart(e);  // names no CPU
          } else {
            e.cpu = cpu_map.Map(e.cpu);
            if constexpr (std::is_same_v<Kind, Sample>) {
              return sink.OnSample(e);
            } else if constexpr (std::is_same_v<Kind, HandOver>) {
              return sink.OnHandOver(e);
            } else {
              return sink.OnKernelDecision(e);
            }
          }
        },
        **next));
  }
  if (feed.offered() == 0 && problems.count() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CSV '", options.input.path, "' has a header but no rows"));
  }
  return absl::OkStatus();
}

// FeedWorkload runs the generator, its placement steered by a reference
// engine, into the session, and finishes it. The samples' cache groups
// (options.group_by) reach the reference engine too, as the simulated
// machine's scheduler would group them.
absl::StatusOr<EngineReport> FeedWorkload(
    const AbOptions& options, const PolicyRegistry& registry,
    std::shared_ptr<const Topology> topology, AbCollector& collector,
    AbSession& session, AbInput& input) {
  ASSIGN_OR_RETURN(SessionSettings settings,
                   ResolveSessionSettings(options.session, registry));
  WorkloadOptions workload = options.workload;
  workload.kind = options.input.workload;
  workload.hz = options.hz;
  workload.numa_preferred_node = settings.options.model.numa_balancing;
  ASSIGN_OR_RETURN(
      std::unique_ptr<ReferencePlacement> reference,
      ReferencePlacement::Create(topology, std::move(settings), registry));
  EventFeed feed(collector, reference.get(), session, options.progress,
                 /*problems=*/nullptr, options.jobs);
  CacheGroupingSink grouped(options.group_by, feed);
  RETURN_IF_ERROR(
      RunWorkload(*topology, workload, reference->Fn(), grouped).status());
  // After Finish, when the collector has had its last event.
  ASSIGN_OR_RETURN(EngineReport report, feed.Finish(input));
  collector.NameGroups(grouped.groups().names());
  return report;
}

// FeedRecorded replays a trace or a CSV into the session, each sample in
// the cache group options.group_by gives it, and finishes it.
absl::StatusOr<EngineReport> FeedRecorded(const AbOptions& options,
                                          const PolicyRegistry& registry,
                                          const Topology& topology,
                                          AbCollector& collector,
                                          AbSession& session, AbInput& input) {
  InputProblems problems;
  EventFeed feed(collector, nullptr, session, options.progress, &problems,
                 options.jobs);
  CacheGroupingSink grouped(options.group_by, feed);
  if (options.input.kind == AbInputSpec::Kind::kTrace) {
    ASSIGN_OR_RETURN(const SessionSettings settings,
                     ResolveSessionSettings(options.session, registry));
    RETURN_IF_ERROR(FeedTrace(options, settings.options.model, topology,
                              grouped, problems));
  } else {
    RETURN_IF_ERROR(FeedCsv(options, feed, grouped, problems));
  }
  // After Finish, when the collector has had its last event.
  ASSIGN_OR_RETURN(EngineReport report, feed.Finish(input));
  collector.NameGroups(grouped.groups().names());
  return report;
}

std::vector<LlcPlace> LlcPlaces(const Topology& topology) {
  std::vector<LlcPlace> places;
  for (const Llc& llc : topology.llcs()) {
    // Placed by its first CPU: an LLC that spans NUMA nodes (sub-NUMA
    // clustering) shows under the first.
    const Cpu& first = topology.cpu(llc.cpus.First());
    places.push_back(
        LlcPlace{llc.id, first.package, first.numa_node, llc.cpus.Count()});
  }
  return places;
}

// DescribeSource names the input, for its report.
std::string DescribeSource(const AbOptions& options) {
  switch (options.input.kind) {
    case AbInputSpec::Kind::kTrace:
      return absl::StrCat("trace:", options.input.path);
    case AbInputSpec::Kind::kCsv:
      return absl::StrCat("csv:", options.input.path);
    case AbInputSpec::Kind::kWorkload:
      break;
  }
  WorkloadOptions w = options.workload;
  w.kind = options.input.workload;
  std::string shape;
  if (w.kind == WorkloadKind::kHackbench) {
    shape = absl::StrCat("hackbench groups=", w.groups, " fds=", w.fds);
  } else {
    const RedisShape redis = RedisShapeOf(w);
    shape = absl::StrCat(w.kind == WorkloadKind::kValkey ? "valkey" : "redis",
                         " instances=", redis.instances,
                         " servers=", redis.server_threads,
                         " clients=", redis.client_threads);
  }
  return absl::StrCat("workload:", shape, " seed=", w.seed,
                      " duration_ms=", w.duration_ns / 1'000'000);
}

// Describe is the input's description in its report: its source, and the
// cache groups' rule but for the default (tgid), whose run is the one
// without the flag.
std::string Describe(const AbOptions& options) {
  if (options.group_by.kind == GroupBy::Kind::kTgid) {
    return DescribeSource(options);
  }
  return absl::StrCat(DescribeSource(options),
                      " group-by=", options.group_by.text);
}

}  // namespace

absl::StatusOr<AbInputSpec> ParseAbInput(absl::string_view text) {
  AbInputSpec spec;
  if (absl::ConsumePrefix(&text, "trace:")) {
    spec.kind = AbInputSpec::Kind::kTrace;
  } else if (absl::ConsumePrefix(&text, "csv:")) {
    spec.kind = AbInputSpec::Kind::kCsv;
  } else if (absl::ConsumePrefix(&text, "workload:")) {
    spec.kind = AbInputSpec::Kind::kWorkload;
    ASSIGN_OR_RETURN(spec.workload, ParseWorkloadKind(text));
    return spec;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "input \"", text,
        "\" is not trace:PATH, csv:PATH, workload:redis, workload:valkey or "
        "workload:hackbench"));
  }
  if (text.empty()) {
    return absl::InvalidArgumentError("input: the path is empty");
  }
  spec.path = std::string(text);
  return spec;
}

SessionMaker InProcessSessions(const PolicyRegistry& registry) {
  return [&registry](std::shared_ptr<const Topology> topology,
                     const client::SessionSpec& config, AbObserver& observer) {
    return MakeInProcessSession(std::move(topology), config, registry,
                                observer);
  };
}

namespace {

// Names reports whether the settings name tunable `name` (KEY=VALUE).
bool Names(const std::vector<std::string>& settings, absl::string_view name) {
  return std::any_of(settings.begin(), settings.end(),
                     [&](const std::string& setting) {
                       return absl::StartsWith(setting, absl::StrCat(name, "="));
                     });
}

// OnOneClock makes the replay's ticks and the model's jiffies one clock
// (docs/MODEL.md, "Time in jiffies"): the kernel clock header's tunables
// (options.kernel_clock, else the trace input's own header) join the
// settings (a tunable the settings name wins); a `hz` tunable
// among them sets the replay's rate too; otherwise --hz sets the model's
// (added to the settings only when it is not the model's default already).
absl::StatusOr<AbOptions> OnOneClock(AbOptions options,
                                     const PolicyRegistry& registry) {
  std::vector<std::string>& settings = options.session.settings;
  if (!options.kernel_clock.has_value() &&
      options.input.kind == AbInputSpec::Kind::kTrace) {
    ASSIGN_OR_RETURN(options.kernel_clock, ReadKernelClock(options.input.path));
  }
  if (options.kernel_clock.has_value()) {
    ASSIGN_OR_RETURN(const TunableValues clock_values,
                     KernelClockValues(*options.kernel_clock));
    for (const TunableSpec& spec : ModelTunables::Specs()) {
      const auto value = clock_values.find(spec.name);
      if (value != clock_values.end() && !Names(settings, spec.name)) {
        settings.push_back(absl::StrCat(spec.name, "=", value->second));
      }
    }
  }
  if (Names(settings, "hz")) {
    ASSIGN_OR_RETURN(const SessionSettings settings,
                     ResolveSessionSettings(options.session, registry));
    options.hz = static_cast<int>(settings.options.model.hz);
  } else if (options.hz != ModelTunables{}.hz) {
    options.session.settings.push_back(absl::StrCat("hz=", options.hz));
  }
  return options;
}

}  // namespace

absl::Status CheckGroupByInput(const AbOptions& options) {
  if (!NeedsCgroupPaths(options.group_by) ||
      options.input.kind == AbInputSpec::Kind::kTrace) {
    return absl::OkStatus();
  }
  return CgroupPathsMissing(
      options.group_by, DescribeSource(options),
      options.input.kind == AbInputSpec::Kind::kCsv
          ? "the sample CSV has no cgroup column"
          : "a generated workload's processes are in no cgroup");
}

absl::StatusOr<AbResult> RunAb(const AbOptions& given,
                               const PolicyRegistry& registry,
                               const SessionMaker& make_session) {
  ASSIGN_OR_RETURN(const AbOptions options, OnOneClock(given, registry));
  if (options.input.kind == AbInputSpec::Kind::kWorkload &&
      !options.cpu_map.identity()) {
    return absl::InvalidArgumentError(
        "cpu map: a workload input runs on the topology's own CPUs; the map "
        "applies to trace: and csv: inputs only");
  }
  RETURN_IF_ERROR(CheckGroupByInput(options));
  ASSIGN_OR_RETURN(Topology loaded, LoadTopology(options.session.topology));
  auto topology = std::make_shared<const Topology>(std::move(loaded));

  std::optional<ScanTraceWriter> scan_trace;
  if (!options.scan_trace.empty()) {
    ASSIGN_OR_RETURN(scan_trace, ScanTraceWriter::Open(options.scan_trace,
                                                       options.session.policies));
  }
  std::optional<PerfettoTraceWriter> perfetto;
  if (!options.perfetto.empty()) {
    ASSIGN_OR_RETURN(perfetto, PerfettoTraceWriter::Open(
                                   options.perfetto, options.session.policies));
  }
  AbCollector collector(options.session.policies, topology->max_cpu() + 1,
                        scan_trace.has_value() ? &*scan_trace : nullptr,
                        perfetto.has_value() ? &*perfetto : nullptr,
                        options.last_scans);
  ASSIGN_OR_RETURN(std::unique_ptr<AbSession> session,
                   make_session(topology, options.session, collector));
  if ((scan_trace.has_value() || perfetto.has_value()) &&
      !session->reports_scans()) {
    return absl::UnimplementedError(
        "--scan-trace and --perfetto: this session backend does not report "
        "single scans");
  }

  AbInput input;
  input.description = Describe(options);
  input.topology = topology->Summary();
  input.topology_source = options.session.topology;
  input.hz = options.hz;
  ASSIGN_OR_RETURN(
      const EngineReport report,
      options.input.kind == AbInputSpec::Kind::kWorkload
          ? FeedWorkload(options, registry, topology, collector, *session,
                         input)
          : FeedRecorded(options, registry, *topology, collector, *session,
                         input));
  collector.FinishPerfetto();
  RETURN_IF_ERROR(collector.status());
  if (scan_trace.has_value()) RETURN_IF_ERROR(scan_trace->Close());
  if (perfetto.has_value()) RETURN_IF_ERROR(perfetto->Close());
  AbResult result =
      collector.Build(report, std::move(input), session->reports_scans());
  result.llcs = LlcPlaces(*topology);
  return result;
}

}  // namespace schedcache::ab
