// `schedcache record`: live collection from the host kernel's scheduler
// tracepoints (collector/recorder.h) into a server session and/or an ftrace
// text file that `ab --input trace:` replays.
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/service_verb_support.h"
#include "cli/stop_signals.h"
#include "cli/verb.h"
#include "collector/proc_attributes.h"
#include "collector/recorder.h"
#include "collector/session_feed.h"
#include "common/model_defaults.h"
#include "trace/ftrace_writer.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "record";
// The model's default epoch (HZ 250 and epoch_period_jiffies HZ / 100: 2
// jiffies of 4 ms): /proc is read at most this often per process.
constexpr int64_t kAttributeEpochNs = 8'000'000;

v1::CollectorLosses ToProto(const host::LossCounts& losses) {
  v1::CollectorLosses out;
  // A kernel decision the BPF ring buffer had no room for is a ring-buffer
  // loss too.
  out.set_ring_buffer_lost(losses.ring_buffer_lost + losses.decisions_lost);
  out.set_unparsed(losses.unparsed);
  out.set_late(losses.late);
  return out;
}

// ProgressLine is the one-line status a TTY shows while recording.
std::string ProgressLine(const host::RecordProgress& p, uint64_t sent) {
  const double seconds = absl::ToDoubleSeconds(p.elapsed);
  return absl::StrFormat(
      "\r%5.1f s  %9.0f events/s  %d samples sent  %d drops ", seconds,
      seconds > 0 ? static_cast<double>(p.records) / seconds : 0.0, sent,
      p.losses.total());
}

class RecordVerb : public Verb {
 public:
  RecordVerb() { common_.server.clear(); }

  absl::string_view summary() const override {
    return "record the host's scheduler tracepoints into a session and/or "
           "a trace file (root)";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
    flags.AddString("--output", "FILE[.gz|.zst]",
                    "also write the capture as ftrace text for "
                    "`ab --input trace:` (.gz: gzip, .zst: Zstandard), with "
                    "each process's cgroup path for `ab --group-by cgroup`",
                    &output_);
    flags.AddInt64("--duration", "SECONDS",
                   "how long to record (SIGINT/SIGTERM end it early)",
                   &duration_s_);
    flags.AddString("--pid", "TGID[,TGID...]",
                    "send only these processes' samples to the session",
                    &pids_);
    flags.AddString("--comm", "NAME",
                    "send only processes whose /proc comm is NAME", &comm_);
    flags.AddInt64("--hz", "N", "tick rate of the samples (kernel CONFIG_HZ)",
                   &hz_);
    flags.AddInt64("--buffer-size-kb", "KIB", "ring buffer per CPU",
                   &buffer_size_kb_);
    flags.AddBool("--kernel-decisions",
                  "also record the kernel's own cache-aware decisions "
                  "(task_cache_work, CONFIG_SCHED_CACHE): into --output with "
                  "the kernel's clock, and to the session (needs root, BTF and "
                  "fexit)",
                  &kernel_decisions_);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    absl::StatusOr<host::ProcessFilter> filter = ParseFilter();
    if (!filter.ok()) return Usage(kVerb, filter.status().message(), err);
    if (duration_s_ < 1) return Usage(kVerb, "--duration must be >= 1", err);
    if (hz_ < 1 || hz_ > 100'000) {
      return Usage(kVerb, absl::StrCat("--hz ", hz_, " is not in 1..100000"),
                   err);
    }
    if (buffer_size_kb_ < 4 || buffer_size_kb_ > 1'048'576) {
      return Usage(kVerb,
                   absl::StrCat("--buffer-size-kb ", buffer_size_kb_,
                                " is not in 4..1048576"),
                   err);
    }
    // Without --output the capture must go somewhere: the default server.
    if (common_.server.empty() && output_.empty()) {
      common_.server = std::string(kDefaultServer);
    }
    return Record(*std::move(filter), out, err);
  }

 private:
  absl::StatusOr<host::ProcessFilter> ParseFilter() const {
    host::ProcessFilter filter;
    filter.comm = comm_;
    if (pids_.empty()) return filter;
    for (const absl::string_view item : absl::StrSplit(pids_, ',')) {
      int32_t tgid = 0;
      if (!absl::SimpleAtoi(item, &tgid) || tgid <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--pid: \"", item, "\" is not a positive process id"));
      }
      filter.tgids.insert(tgid);
    }
    return filter;
  }

  int Record(host::ProcessFilter filter, std::ostream& out, std::ostream& err);
  void PrintSummary(const host::RecordProgress& result,
                    const host::SessionFeed& feed,
                    const v1::IngestSummary* ingest, int64_t trace_lines,
                    std::ostream& out) const;

  CommonFlags common_;
  std::string output_;
  std::string pids_;
  std::string comm_;
  int64_t duration_s_ = 10;
  int64_t hz_ = kDefaultHz;
  int64_t buffer_size_kb_ = 4096;
  bool kernel_decisions_ = false;
};

int RecordVerb::Record(host::ProcessFilter filter, std::ostream& out,
                       std::ostream& err) {
  // First, before gRPC starts threads: a SIGINT or SIGTERM from here on
  // stops the capture, which then removes its tracefs instance.
  StopSignals stop;
  std::unique_ptr<client::Client> client;
  std::unique_ptr<client::IngestWriter> writer;
  if (!common_.server.empty()) {
    absl::StatusOr<std::unique_ptr<client::Client>> connected =
        Connect(common_);
    if (!connected.ok()) return Fail(kVerb, connected.status(), err);
    client = *std::move(connected);
    // Fail before touching tracefs when the session is not there.
    if (absl::StatusOr<v1::Session> session =
            client->GetSession(common_.session);
        !session.ok()) {
      return Fail(kVerb, session.status(), err);
    }
    writer = client->StartIngest(common_.session);
  }
  host::RecordOptions options;
  options.duration = absl::Seconds(duration_s_);
  options.hz = static_cast<int>(hz_);
  options.buffer_size_kb = static_cast<int>(buffer_size_kb_);
  options.kernel_decisions = kernel_decisions_;
  absl::StatusOr<std::unique_ptr<host::Recorder>> recorder =
      host::Recorder::Start(options);
  if (!recorder.ok()) {
    absl::Status why = recorder.status();
    if (geteuid() != 0) {
      why = absl::Status(why.code(),
                         absl::StrCat(why.message(), " (record needs root)"));
    }
    return Fail(kVerb, why, err);
  }
  if (!(*recorder)->exact_tgids()) {
    err << "record: this kernel has no task:task_newtask tracepoint: each "
           "thread's process comes from /proc/TID/status, and a thread that "
           "exits before record reads it is filed as a process of its own\n";
  }
  stop.Watch([&recorder] { (*recorder)->RequestStop(); });
  // Created once tracefs is had, so a refused capture leaves no file.
  std::unique_ptr<FtraceWriter> trace;
  if (!output_.empty()) {
    absl::StatusOr<std::unique_ptr<FtraceWriter>> opened =
        FtraceWriter::Open(output_);
    if (!opened.ok()) return Fail(kVerb, opened.status(), err);
    trace = *std::move(opened);
  }

  host::ProcAttributes attributes(kAttributeEpochNs);
  host::SessionFeed feed(writer.get(), std::move(filter), attributes);
  host::AttributeSink sink(attributes, feed);
  const bool tty = isatty(STDERR_FILENO) == 1;
  const absl::StatusOr<host::RecordProgress> result = (*recorder)->Run(
      sink, trace.get(),
      [&writer](const host::LossCounts& increment) {
        if (writer != nullptr) writer->AddLosses(ToProto(increment));
      },
      [&](const host::RecordProgress& progress) {
        if (tty)
          err << ProgressLine(progress, feed.samples_sent()) << std::flush;
      });
  stop.Disarm();
  if (tty) err << "\n";
  const absl::Status closed =
      trace != nullptr ? trace->Close() : absl::OkStatus();
  std::optional<v1::IngestSummary> ingest;
  if (writer != nullptr) {
    absl::StatusOr<v1::IngestSummary> finished = writer->Finish();
    if (!finished.ok()) return Fail(kVerb, finished.status(), err);
    ingest = *finished;
  }
  if (!result.ok()) return Fail(kVerb, result.status(), err);
  if (!closed.ok()) return Fail(kVerb, closed, err);
  PrintSummary(*result, feed, ingest ? &*ingest : nullptr,
               trace != nullptr ? trace->lines() : 0, out);
  return kExitOk;
}

void RecordVerb::PrintSummary(const host::RecordProgress& result,
                              const host::SessionFeed& feed,
                              const v1::IngestSummary* ingest,
                              int64_t trace_lines, std::ostream& out) const {
  const host::LossCounts& lost = result.losses;
  const double seconds = absl::ToDoubleSeconds(result.elapsed);
  if (common_.json()) {
    out << absl::StrFormat(
        "{\"seconds\": %.3f, \"records\": %d, \"samples\": %d, "
        "\"handOvers\": %d, \"samplesSent\": %d, \"handOversSent\": %d, "
        "\"exitsSent\": %d, "
        "\"accepted\": %d, \"rejected\": %d, \"traceLines\": %d, "
        "\"kernelDecisions\": %d, \"cgroupPaths\": %d, \"cgroupUnread\": %d, "
        "\"losses\": {\"ringBufferLost\": %d, \"unparsed\": %d, \"late\": "
        "%d, \"kernelDecisionsLost\": %d}, \"runtimeNs\": [%s]}\n",
        seconds, result.records, result.samples, result.hand_overs,
        feed.samples_sent(), feed.hand_overs_sent(), feed.exits_sent(),
        ingest != nullptr ? ingest->accepted() : 0,
        ingest != nullptr ? ingest->rejected() : 0, trace_lines,
        result.kernel_decisions, result.cgroup_paths, result.cgroup_unread,
        lost.ring_buffer_lost, lost.unparsed, lost.late, lost.decisions_lost,
        absl::StrJoin(result.runtime_ns, ", "));
    return;
  }
  out << absl::StrFormat(
      "recorded %.1f s: %d records (%.0f/s), %d samples, %d hand-overs\n",
      seconds, result.records,
      seconds > 0 ? static_cast<double>(result.records) / seconds : 0.0,
      result.samples, result.hand_overs);
  if (ingest != nullptr) {
    out << absl::StrFormat(
        "session %s: sent %d samples, %d hand-overs, %d process exits; "
        "accepted %d, rejected %d\n",
        common_.session, feed.samples_sent(), feed.hand_overs_sent(),
        feed.exits_sent(), ingest->accepted(), ingest->rejected());
  }
  if (!output_.empty()) {
    out << absl::StrFormat(
        "wrote %d lines to %s (cgroup paths of %d processes; %d without one: "
        "gone before read, or no cpu nor v2 line in /proc/PID/cgroup)\n",
        trace_lines, output_, result.cgroup_paths, result.cgroup_unread);
  }
  if (const std::optional<KernelClock>& clock = result.kernel_clock) {
    out << absl::StrFormat(
        "kernel decisions: %d (task_cache_work returns), %d ticks "
        "(sched_tick); kernel clock: HZ %d, jiffies %d at %d ns, epoch "
        "period %d jiffies\n",
        result.kernel_decisions, result.kernel_ticks, clock->hz,
        clock->jiffies, clock->at_ns, clock->epoch_period);
  }
  out << absl::StrFormat(
      "lost: %d ring buffer (overrun), %d unparsed, %d late",
      lost.ring_buffer_lost, lost.unparsed, lost.late);
  if (kernel_decisions_) {
    out << absl::StrFormat(
        ", %d kernel decisions and ticks (BPF ring buffer full)",
        lost.decisions_lost);
  }
  out << "\n";
}

}  // namespace

std::unique_ptr<Verb> MakeRecordVerb() {
  return std::make_unique<RecordVerb>();
}

}  // namespace schedcache::cli
