// `schedcache ab`: one input through several policies in one session
// (DESIGN §4); flag parsing only, the work is schedcache::ab's.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/cli/verb.h"
#include "common/service_defaults.h"
#include "common/status_macros.h"
#include "eval/ab/ab_command.h"
#include "trace/cpu_map.h"

namespace schedcache::cli {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
// kMaxHz bounds --hz: Linux's CONFIG_HZ is at most 1000, and a trace's gap
// of up to an hour is filled with a tick per 1/HZ.
constexpr int64_t kMaxHz = 10'000;
// kUnbounded: no upper limit worth telling the user about.
constexpr int64_t kUnbounded = INT64_MAX / 2 / kNsPerMs;

// CheckFlag checks a numeric flag against [lo, hi] and names the flag and
// the value as typed, not the WorkloadOptions field it lands in: the user
// typed `--duration-ms -5`, not `duration_ns = -5000000`.
absl::Status CheckFlag(absl::string_view flag, int64_t value, int64_t lo,
                       int64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  const std::string want = hi == kUnbounded && lo == 1
                               ? std::string("must be > 0")
                               : absl::StrCat("must be in ", lo, "..", hi);
  return absl::InvalidArgumentError(absl::StrCat(flag, " ", value, ": ", want));
}

class AbVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "A/B: run a trace, CSV or workload (or a list of them) through "
           "several policies";
  }

  void DefineFlags(FlagSet& flags) override {
    flags.AddString(
        "--input", "INPUT",
        "trace:PATH or csv:PATH (plain or gzip; PATH - is stdin; a "
        "trace may also be a trace-cmd .dat file), workload:redis or "
        "workload:hackbench",
        &input_);
    flags.AddString("--inputs-file", "LIST",
                    "instead of --input: a file of inputs, one a line (# "
                    "comments; relative paths from LIST's folder), each in a "
                    "session of its own, reported merged",
                    &command_.inputs_file);
    flags.AddString("--shard", "K/N",
                    "with --inputs-file: run only entries i with i % N == K "
                    "(K from 0, as Kubernetes' JOB_COMPLETION_INDEX); --json "
                    "then writes the shard result `ab-merge` reads",
                    &shard_);
    flags.AddString("--topology", "SOURCE",
                    "host, synthetic:HWLOC_SYNTHETIC_STRING or xml:PATH",
                    &command_.options.session.topology);
    flags.AddString("--policies", "P1,P2,...",
                    "policies, the first is the reference", &policies_);
    flags.AddChoice("--trigger", {"tick", "query"},
                    "scans on the kernel's tick, or only when queried",
                    &command_.options.session.trigger);
    flags.AddRepeated("--set", "KEY=VALUE",
                      "a tunable (model or policy; POLICY.KEY for one "
                      "policy); repeatable",
                      &command_.options.session.settings);
    flags.AddBool("--numa-balancing", "shorthand for --set numa_balancing=true",
                  &numa_balancing_);
    flags.AddInt64("--hz", "N",
                   "scheduler tick rate of traces and workloads, 1..10000 "
                   "(Linux: 100..1000)",
                   &hz_);
    flags.AddString("--cpu-map", "MAP",
                    "trace:/csv: inputs only: rename CPUs, entries FROM=TO or "
                    "FROM:TO, each a CPU or range, e.g. 0-15=16-31; no two "
                    "CPUs onto one",
                    &cpu_map_);
    DefineWorkloadFlags(flags);
    flags.AddString("--json", "FILE", "write the result as JSON",
                    &command_.files.json);
    flags.AddString("--csv", "FILE", "write the policy table as CSV",
                    &command_.files.csv);
    flags.AddString("--html", "FILE", "write a self-contained HTML report",
                    &command_.files.html);
    flags.AddString("--scan-trace", "FILE",
                    "write each scan as the seed's tracepoint, one file per "
                    "policy (with --server, streamed from the server: "
                    "WatchScans)",
                    &command_.options.scan_trace);
    flags.AddString("--server", "ADDR",
                    "run the session on schedcached at ADDR (unix:PATH or "
                    "HOST:PORT); default: in this process",
                    &command_.server);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    if (absl::Status s = ApplyInputs(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    if (absl::Status s = ApplyCpuMap(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    command_.options.session.policies =
        absl::StrSplit(policies_, ',', absl::SkipEmpty());
    if (numa_balancing_) {
      command_.options.session.settings.push_back("numa_balancing=true");
    }
    if (absl::Status s = ApplyWorkloadFlags(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    command_.progress = ShowProgress(err);
    absl::Status status = ab::RunAbCommand(command_, out, err);
    if (absl::IsUnimplemented(status)) return UsageError(status.message(), err);
    if (!status.ok()) {
      err << "schedcache ab: " << status << "\n";
      return kExitError;
    }
    return kExitOk;
  }

 private:
  void DefineWorkloadFlags(FlagSet& flags) {
    flags.AddInt64("--seed", "N", "workload: random seed", &seed_);
    flags.AddInt64("--duration-ms", "MS", "workload: simulated time",
                   &duration_ms_);
    flags.AddInt64("--server-threads", "N", "workload:redis: server threads",
                   &server_threads_);
    flags.AddInt64("--client-threads", "N", "workload:redis: client threads",
                   &client_threads_);
    flags.AddInt64("--groups", "G", "workload:hackbench: groups (-g)",
                   &groups_);
    flags.AddInt64("--fds", "F", "workload:hackbench: fds per group (-f)",
                   &fds_);
    flags.AddString("--spill-probability", "P",
                    "workload: chance (0..1) that a wake-up ignores the "
                    "preferred LLC and spills elsewhere",
                    &spill_probability_);
  }

  // ApplyInputs takes --input, or --inputs-file and its --shard.
  absl::Status ApplyInputs() {
    if (input_.empty() == command_.inputs_file.empty()) {
      return absl::InvalidArgumentError(
          "give one of --input and --inputs-file");
    }
    if (!command_.inputs_file.empty()) {
      if (!command_.options.scan_trace.empty()) {
        return absl::InvalidArgumentError(
            "--scan-trace takes one --input, not --inputs-file (every input "
            "would write the same files)");
      }
      if (shard_.empty()) return absl::OkStatus();
      ASSIGN_OR_RETURN(command_.shard, ab::ParseShard(shard_));
      if (command_.files.json.empty()) {
        return absl::InvalidArgumentError(
            "--shard needs --json FILE: the shard result `ab-merge` reads");
      }
      return absl::OkStatus();
    }
    if (!shard_.empty()) {
      return absl::InvalidArgumentError(
          "--shard splits an --inputs-file list, not one --input");
    }
    ASSIGN_OR_RETURN(command_.options.input, ab::ParseAbInput(input_));
    return absl::OkStatus();
  }

  // ApplyCpuMap parses --cpu-map, which only renames the CPUs of recorded
  // inputs: a workload runs on the topology's own CPUs.
  absl::Status ApplyCpuMap() {
    if (cpu_map_.empty()) return absl::OkStatus();
    command_.cpu_map = cpu_map_;
    if (command_.inputs_file.empty() &&
        command_.options.input.kind == ab::AbInputSpec::Kind::kWorkload) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--cpu-map ", cpu_map_, ": applies to trace: and csv: inputs only, ",
          "not to ", input_));
    }
    absl::StatusOr<CpuMap> map = CpuMap::Parse(cpu_map_);
    if (!map.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cpu-map ", cpu_map_, ": ", map.status().message()));
    }
    command_.options.cpu_map = *std::move(map);
    return absl::OkStatus();
  }

  // ApplyWorkloadFlags checks every numeric flag by its own name, then
  // fills the workload options (whose own validation stays as a backstop).
  absl::Status ApplyWorkloadFlags() {
    RETURN_IF_ERROR(CheckFlag("--hz", hz_, 1, kMaxHz));
    RETURN_IF_ERROR(CheckFlag("--duration-ms", duration_ms_, 1, kUnbounded));
    RETURN_IF_ERROR(
        CheckFlag("--server-threads", server_threads_, 1, kMaxWorkloadThreads));
    RETURN_IF_ERROR(
        CheckFlag("--client-threads", client_threads_, 1, kMaxWorkloadThreads));
    RETURN_IF_ERROR(CheckFlag("--groups", groups_, 1, kMaxWorkloadThreads));
    // hackbench runs 2 * groups * fds workers.
    RETURN_IF_ERROR(
        CheckFlag("--fds", fds_, 1, kMaxWorkloadThreads / (2 * groups_)));
    double spill = 0;
    if (!absl::SimpleAtod(spill_probability_, &spill) ||
        !std::isfinite(spill) || spill < 0.0 || spill > 1.0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--spill-probability ", spill_probability_, ": must be in 0..1"));
    }
    command_.options.hz = static_cast<int>(hz_);
    WorkloadOptions& w = command_.options.workload;
    w.spill_probability = spill;
    w.seed = static_cast<uint64_t>(seed_);
    w.duration_ns = duration_ms_ * kNsPerMs;
    w.server_threads = static_cast<int>(server_threads_);
    w.client_threads = static_cast<int>(client_threads_);
    w.groups = static_cast<int>(groups_);
    w.fds = static_cast<int>(fds_);
    w.kind = command_.options.input.workload;
    w.hz = command_.options.hz;
    return ValidateWorkloadOptions(w);
  }

  // ShowProgress: a progress line only when the diagnostics go to a
  // terminal.
  static bool ShowProgress(const std::ostream& err) {
    return &err == &std::cerr && isatty(STDERR_FILENO) == 1;
  }

  static int UsageError(absl::string_view message, std::ostream& err) {
    err << "schedcache ab: " << message << "\n";
    return kExitUsage;
  }

  std::string input_;
  std::string shard_;
  std::string cpu_map_;
  // A string so that the message can repeat what was typed; the default is
  // the workload generator's.
  std::string spill_probability_ =
      absl::StrCat(WorkloadOptions{}.spill_probability);
  std::string policies_ = kDefaultPolicies;
  bool numa_balancing_ = false;
  int64_t hz_ = 250;
  int64_t seed_ = 1;
  int64_t duration_ms_ = 1000;
  int64_t server_threads_ = WorkloadOptions{}.server_threads;
  int64_t client_threads_ = WorkloadOptions{}.client_threads;
  int64_t groups_ = WorkloadOptions{}.groups;
  int64_t fds_ = WorkloadOptions{}.fds;
  ab::AbCommand command_;
};

}  // namespace

std::unique_ptr<Verb> MakeAbVerb() { return std::make_unique<AbVerb>(); }

}  // namespace schedcache::cli
