// Fuzz target: the bytes of a scheduler trace through the whole replay path
// of `schedcache ab --input trace:FILE` (LineReader, plain, gzip or zstd;
// ParseTraceLine; SchedStateMachine) on kFuzzTopology. Input that begins
// with trace-cmd's magic (a .dat file, read by libtracecmd) is skipped.
//
// Besides the sanitizers, it checks what trace_replay.h and event_sink.h
// promise: events come in time order on CPUs of the topology, the stats
// count exactly the events delivered, and plain text replays to the same
// result from a file (ReplayTraceFile) as from memory (ReplayTraceText).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fuzzing.h"
#include "events/event_sink.h"
#include "topology/topology_source.h"
#include "trace/cgroup_path.h"
#include "trace/trace_dat.h"
#include "trace/trace_replay.h"
#include "trace/zstd_stream.h"

namespace schedcache {
namespace {

// CheckingSink checks the EventSink contract on each event and keeps a
// digest of the stream (counts and a hash of every field), so that two
// replays compare without holding their events: a gap in a trace may
// legitimately produce millions of ticks.
class CheckingSink : public EventSink {
 public:
  explicit CheckingSink(const Topology& topology) : topology_(topology) {}

  absl::Status OnSample(const Sample& sample) override {
    CheckOrder(sample.timestamp_ns, sample.cpu);
    ++samples_;
    for (int64_t field :
         {sample.timestamp_ns, int64_t{sample.cpu}, int64_t{sample.tgid},
          int64_t{sample.tid}, sample.delta_ns, int64_t{sample.tick},
          int64_t{sample.nr_threads}, int64_t{sample.numa_node},
          sample.footprint_pages}) {
      Mix(static_cast<uint64_t>(field));
    }
    for (char c : sample.comm.view()) Mix(static_cast<unsigned char>(c));
    return absl::OkStatus();
  }

  absl::Status OnHandOver(const HandOver& hand_over) override {
    CheckOrder(hand_over.timestamp_ns, hand_over.cpu);
    ++hand_overs_;
    for (int64_t field : {hand_over.timestamp_ns, int64_t{hand_over.cpu},
                          int64_t{hand_over.tgid}, int64_t{hand_over.tid}}) {
      Mix(static_cast<uint64_t>(field));
    }
    return absl::OkStatus();
  }

  absl::Status OnProcessExit(const ProcessExit& exit) override {
    CheckTime(exit.timestamp_ns);
    ++exits_;
    Mix(static_cast<uint64_t>(exit.timestamp_ns));
    Mix(static_cast<uint64_t>(exit.tgid));
    return absl::OkStatus();
  }

  absl::Status OnProcessStart(const ProcessStart& start) override {
    CheckTime(start.timestamp_ns);
    ++starts_;
    Mix(static_cast<uint64_t>(start.timestamp_ns));
    Mix(static_cast<uint64_t>(start.tgid));
    return absl::OkStatus();
  }

  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    CheckOrder(decision.timestamp_ns, decision.cpu);
    FUZZ_CHECK(decision.preferred_cpu == -1 ||
                   topology_.HasCpu(decision.preferred_cpu),
               absl::StrCat("decision prefers cpu ", decision.preferred_cpu,
                            ", not in the topology"));
    ++decisions_;
    for (int64_t field :
         {decision.timestamp_ns, int64_t{decision.cpu},
          int64_t{decision.tgid}, int64_t{decision.tid},
          int64_t{decision.preferred_cpu}, int64_t{decision.scanned},
          decision.nr_running_avg, decision.footprint,
          static_cast<int64_t>(decision.group), decision.jiffies,
          decision.group_epoch, decision.next_scan, decision.cpu_epoch,
          decision.cpu_epoch_next}) {
      Mix(static_cast<uint64_t>(field));
    }
    return absl::OkStatus();
  }

  int64_t samples() const { return samples_; }
  int64_t hand_overs() const { return hand_overs_; }
  int64_t exits() const { return exits_; }
  int64_t starts() const { return starts_; }
  int64_t decisions() const { return decisions_; }
  uint64_t hash() const { return hash_; }

 private:
  void CheckOrder(int64_t timestamp_ns, int32_t cpu) {
    FUZZ_CHECK(topology_.HasCpu(cpu),
               absl::StrCat("event on cpu ", cpu, ", not in the topology"));
    CheckTime(timestamp_ns);
  }
  void CheckTime(int64_t timestamp_ns) {
    FUZZ_CHECK(timestamp_ns >= last_timestamp_ns_,
               absl::StrCat("event at ", timestamp_ns, " after one at ",
                            last_timestamp_ns_));
    last_timestamp_ns_ = timestamp_ns;
  }
  // Mix folds one value into the FNV-1a hash of the stream.
  void Mix(uint64_t value) {
    hash_ = (hash_ ^ value) * 0x100000001b3u;
  }

  const Topology& topology_;
  int64_t last_timestamp_ns_ = INT64_MIN;
  int64_t samples_ = 0;
  int64_t hand_overs_ = 0;
  int64_t exits_ = 0;
  int64_t starts_ = 0;
  int64_t decisions_ = 0;
  uint64_t hash_ = 0xcbf29ce484222325u;
};

// Describe is a replay's outcome as text, for comparing two replays and
// for the message when they differ. An error counts by its code: a message
// may name the file.
std::string Describe(const absl::StatusOr<ReplayStats>& stats,
                     const CheckingSink& sink) {
  const std::string events =
      absl::StrCat(sink.samples(), " samples, ", sink.hand_overs(),
                   " hand-overs, ", sink.exits(), " exits, ",
                   sink.decisions(), " decisions, hash ",
                   sink.hash());
  if (!stats.ok()) {
    return absl::StrCat(absl::StatusCodeToString(stats.status().code()),
                        "; ", events);
  }
  const ReplayStats& s = *stats;
  std::string malformed;
  for (const MalformedLine& line : s.first_malformed) {
    absl::StrAppend(&malformed, " [line ", line.line_number, ": ", line.error,
                    ": ", line.text, "]");
  }
  return absl::StrCat(
      "lines ", s.lines, " sched ", s.sched_events, " switch ",
      s.switch_events, " migrate ", s.migrate_events, " exit ", s.exit_events,
      " malformed ", s.malformed_lines, " samples ", s.samples, " ticks ",
      s.tick_samples, " hand-overs ", s.hand_overs, " process exits ",
      s.process_exits, " process starts ", s.process_starts, " mismatches ",
      s.prev_mismatches, " moved ", s.moved_running_threads, " guessed ",
      s.guessed_tgid_hand_overs, " kernel ticks ", s.kernel_ticks,
      " unmatched ", s.unmatched_ticks, " cgroups ", s.cgroup_lines, " time ", s.first_timestamp_ns, "..",
      s.last_timestamp_ns, " runtime ", absl::StrJoin(s.runtime_ns, ","),
      " cpus ", s.cpus_seen.ToString(), malformed, "; ", events);
}

// CheckCounts checks that a successful replay's stats count what the sink
// received.
void CheckCounts(const absl::StatusOr<ReplayStats>& stats,
                 const CheckingSink& sink) {
  if (!stats.ok()) return;
  FUZZ_CHECK(stats->samples == sink.samples() &&
                 stats->hand_overs == sink.hand_overs() &&
                 stats->process_exits == sink.exits() &&
                 stats->process_starts == sink.starts(),
             Describe(stats, sink));
}

// ReplayAsFile replays `data` from an in-memory file (memfd), through the
// same LineReader a trace on disk goes through.
absl::StatusOr<ReplayStats> ReplayAsFile(std::string_view data,
                                         const TraceOptions& options,
                                         EventSink& sink) {
  const int fd = memfd_create("trace", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0, "memfd_create failed");
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = write(fd, data.data() + written, data.size() - written);
    FUZZ_CHECK(n > 0, "writing the memfd failed");
    written += static_cast<size_t>(n);
  }
  absl::StatusOr<ReplayStats> stats =
      ReplayTraceFile(absl::StrCat("/proc/self/fd/", fd), options, sink);
  close(fd);
  return stats;
}

void FuzzOneInput(std::string_view text) {
  // A file starting with trace-cmd's magic goes to libtracecmd, a C library
  // this target does not fuzz (trace_dat_test covers our side of it).
  if (absl::string_view(text.data(), text.size())
          .substr(0, kTraceDatMagic.size()) == kTraceDatMagic) {
    return;
  }
  static const Topology& topology =
      *new Topology(ValueOrAbort(LoadTopology(kFuzzTopology)));
  TraceOptions options;
  options.topology = &topology;
  // A path handed on is one record could have written.
  options.on_cgroup = [](int32_t tgid, std::string_view path) {
    FUZZ_CHECK(tgid > 0 && UnescapeCgroupPath(EscapeCgroupPath(path)) ==
                               std::string(path),
               absl::StrCat("cgroup of ", tgid, " does not round-trip"));
  };

  CheckingSink from_file(*options.topology);
  const absl::StatusOr<ReplayStats> file_stats =
      ReplayAsFile(text, options, from_file);
  CheckCounts(file_stats, from_file);

  // zlib reads a file starting with the gzip magic (0x1f 0x8b) as gzip,
  // LineReader one starting with the zstd magic as zstd; only plain text
  // has an in-memory twin.
  if (!text.empty() && text[0] == '\x1f') return;
  if (StartsZstdFrame(text)) return;
  CheckingSink from_text(*options.topology);
  const absl::StatusOr<ReplayStats> text_stats =
      ReplayTraceText(text, options, from_text);
  CheckCounts(text_stats, from_text);
  const std::string file_result = Describe(file_stats, from_file);
  const std::string text_result = Describe(text_stats, from_text);
  FUZZ_CHECK(file_result == text_result,
             absl::StrCat("from a file: ", file_result,
                          "\nfrom memory: ", text_result));
}

}  // namespace
}  // namespace schedcache

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  schedcache::FuzzOneInput(
      std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
