#include "client/ab/ab_runner.h"

#include <fstream>
#include <iostream>
#include <optional>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "client/ab/ab_collector.h"
#include "client/ab/in_process_session.h"
#include "client/csv/sample_csv.h"
#include "client/report/scan_trace.h"
#include "client/trace/cpu_map.h"
#include "client/trace/trace_replay.h"
#include "common/status_macros.h"

namespace schedcache::ab {
namespace {

constexpr int64_t kProgressEvery = 1 << 16;
constexpr size_t kKeptMalformed = 5;

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

// Feed passes each event to the collector, the reference (if any) and the
// session, counting what went through.
class Feed : public EventSink {
 public:
  Feed(AbCollector& collector, EventSink* reference, AbSession& session,
       const std::function<void(const AbProgress&)>& progress)
      : collector_(collector),
        reference_(reference),
        session_(session),
        progress_(progress) {}

  absl::Status OnSample(const Sample& sample) override {
    Note(sample.timestamp_ns);
    ++samples_;
    collector_.OnSample(sample);
    if (reference_ != nullptr) RETURN_IF_ERROR(reference_->OnSample(sample));
    return session_.OnSample(sample);
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    Note(hand_over.timestamp_ns);
    ++hand_overs_;
    if (reference_ != nullptr) {
      RETURN_IF_ERROR(reference_->OnHandOver(hand_over));
    }
    return session_.OnHandOver(hand_over);
  }

  // Fill copies the counts and time span into `input`.
  void Fill(AbInput& input) const {
    input.samples = samples_;
    input.handovers = hand_overs_;
    input.start_ns = first_ns_.value_or(0);
    input.duration_ns = first_ns_.has_value() ? last_ns_ - *first_ns_ : 0;
  }

 private:
  void Note(int64_t timestamp_ns) {
    if (!first_ns_.has_value()) first_ns_ = timestamp_ns;
    last_ns_ = timestamp_ns;
    if (progress_ && (samples_ + hand_overs_) % kProgressEvery == 0) {
      progress_(AbProgress{static_cast<int64_t>(samples_ + hand_overs_),
                           last_ns_ - *first_ns_});
    }
  }

  AbCollector& collector_;
  EventSink* reference_;
  AbSession& session_;
  const std::function<void(const AbProgress&)>& progress_;
  uint64_t samples_ = 0;
  uint64_t hand_overs_ = 0;
  std::optional<int64_t> first_ns_;
  int64_t last_ns_ = 0;
};

absl::Status FeedTrace(const AbOptions& options, const Topology& topology,
                       EventSink& sink, AbInput& input) {
  TraceOptions trace;
  trace.hz = options.hz;
  trace.cpu_map = options.cpu_map;
  trace.topology = &topology;
  ASSIGN_OR_RETURN(const ReplayStats stats,
                   ReplayTraceFile(options.input.path, trace, sink));
  input.malformed_lines = stats.malformed_lines;
  for (const MalformedLine& line : stats.first_malformed) {
    input.malformed_examples.push_back(absl::StrCat(
        "line ", line.line_number, ": ", line.error, ": ", line.text));
  }
  return absl::OkStatus();
}

// FeedCsv reads the sample CSV. A bad line before the first good event
// (the header, most often: the wrong file) stops the run; later bad lines
// are counted as malformed and skipped, as a trace's are.
absl::Status FeedCsv(const AbOptions& options, EventSink& sink,
                     AbInput& input) {
  const CpuMap& cpu_map = options.cpu_map;
  std::ifstream file;
  if (options.input.path != "-") {
    file.open(options.input.path);
    if (!file) {
      return absl::NotFoundError(
          absl::StrCat("input: cannot read CSV file ", options.input.path));
    }
  }
  SampleCsvReader reader(options.input.path == "-" ? std::cin : file);
  bool any = false;
  while (true) {
    absl::StatusOr<std::optional<CsvEvent>> next = reader.Next();
    if (!next.ok()) {
      if (!any) return next.status();
      ++input.malformed_lines;
      if (input.malformed_examples.size() < kKeptMalformed) {
        input.malformed_examples.emplace_back(next.status().message());
      }
      continue;
    }
    if (!next->has_value()) return absl::OkStatus();
    any = true;
    CsvEvent& event = **next;
    absl::Status applied = std::visit(
        [&](auto& e) -> absl::Status {
          e.cpu = cpu_map.Map(e.cpu);
          if constexpr (std::is_same_v<std::decay_t<decltype(e)>, Sample>) {
            return sink.OnSample(e);
          } else {
            return sink.OnHandOver(e);
          }
        },
        event);
    if (!applied.ok()) {
      return absl::Status(applied.code(), absl::StrCat("line ", reader.line(),
                                                       ": ", applied.message()));
    }
  }
}

std::string Describe(const AbOptions& options) {
  switch (options.input.kind) {
    case AbInputSpec::Kind::kTrace:
      return absl::StrCat("trace:", options.input.path);
    case AbInputSpec::Kind::kCsv:
      return absl::StrCat("csv:", options.input.path);
    case AbInputSpec::Kind::kWorkload:
      break;
  }
  const WorkloadOptions& w = options.workload;
  const std::string shape =
      options.input.workload == WorkloadKind::kRedis
          ? absl::StrCat("redis servers=", w.server_threads,
                         " clients=", w.client_threads)
          : absl::StrCat("hackbench groups=", w.groups, " fds=", w.fds);
  return absl::StrCat("workload:", shape, " seed=", w.seed,
                      " duration_ms=", w.duration_ns / 1'000'000);
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
        "\" is not trace:PATH, csv:PATH, workload:redis or workload:hackbench"));
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

absl::StatusOr<AbResult> RunAb(const AbOptions& options,
                               const PolicyRegistry& registry,
                               const SessionMaker& make_session) {
  if (options.input.kind == AbInputSpec::Kind::kWorkload &&
      !options.cpu_map.identity()) {
    return absl::InvalidArgumentError(
        "cpu map: a workload input runs on the topology's own CPUs; the map "
        "applies to trace: and csv: inputs only");
  }
  ASSIGN_OR_RETURN(Topology loaded, LoadTopology(options.session.topology));
  auto topology = std::make_shared<const Topology>(std::move(loaded));

  std::optional<ScanTraceWriter> scan_trace;
  if (!options.scan_trace.empty()) {
    ASSIGN_OR_RETURN(scan_trace, ScanTraceWriter::Open(options.scan_trace,
                                                       options.session.policies));
  }
  AbCollector collector(options.session.policies, topology->max_cpu() + 1,
                        scan_trace.has_value() ? &*scan_trace : nullptr);
  ASSIGN_OR_RETURN(std::unique_ptr<AbSession> session,
                   make_session(topology, options.session, collector));
  if (scan_trace.has_value() && !session->reports_scans()) {
    return absl::UnimplementedError(
        "--scan-trace is in-process only: this session backend (a server) "
        "does not report single scans; drop --server to write scan traces");
  }

  AbInput input;
  input.description = Describe(options);
  input.topology = topology->Summary();
  input.topology_source = options.session.topology;
  input.hz = options.hz;
  if (options.input.kind == AbInputSpec::Kind::kWorkload) {
    ASSIGN_OR_RETURN(SessionSettings settings,
                     ResolveSessionSettings(options.session, registry));
    WorkloadOptions workload = options.workload;
    workload.kind = options.input.workload;
    workload.hz = options.hz;
    workload.numa_preferred_node = settings.options.model.numa_balancing;
    ASSIGN_OR_RETURN(
        std::unique_ptr<ReferencePlacement> reference,
        ReferencePlacement::Create(topology, std::move(settings), registry));
    Feed feed(collector, reference.get(), *session, options.progress);
    RETURN_IF_ERROR(
        RunWorkload(*topology, workload, reference->Fn(), feed).status());
    feed.Fill(input);
  } else {
    Feed feed(collector, nullptr, *session, options.progress);
    RETURN_IF_ERROR(options.input.kind == AbInputSpec::Kind::kTrace
                        ? FeedTrace(options, *topology, feed, input)
                        : FeedCsv(options, feed, input));
    feed.Fill(input);
  }
  ASSIGN_OR_RETURN(const EngineReport report, session->Finish());
  RETURN_IF_ERROR(collector.status());
  if (scan_trace.has_value()) RETURN_IF_ERROR(scan_trace->Close());
  return collector.Build(report, std::move(input), session->reports_scans());
}

}  // namespace schedcache::ab
