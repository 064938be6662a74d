// `schedcache ab`: one input through several policies in one session
// (docs/EVALUATION.md), and `schedcache sweep`: that for every combination of
// --vary values. Flag parsing only, the work is schedcache::ab's. Both verbs
// are this one class, so they take the flags they share the same way.
#include <sched.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/verb.h"
#include "common/model_defaults.h"
#include "common/service_defaults.h"
#include "common/status_macros.h"
#include "eval/ab/ab_command.h"
#include "eval/ab/cache_groups.h"
#include "eval/ab/sweep.h"
#include "eval/ab/sweep_command.h"
#include "trace/cpu_map.h"

namespace schedcache::cli {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
// kMaxHz bounds --hz: Linux's CONFIG_HZ is at most 1000, and a trace's gap
// of up to an hour is filled with a tick per 1/HZ.
constexpr int64_t kMaxHz = 10'000;
// kUnbounded: no upper limit worth telling the user about.
constexpr int64_t kUnbounded = INT64_MAX / 2 / kNsPerMs;
// kMaxJobs bounds --jobs: a sweep's runs, and an A/B's stages, are threads
// of this process.
constexpr int64_t kMaxJobs = 1024;

// UsableCpus is the number of CPUs this process may run on: its affinity
// mask, which taskset and cpusets narrow (std::thread::hardware_concurrency
// counts the machine's), or the machine's when the mask cannot be read; at
// least 1.
int64_t UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

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

// ShapeHelp describes a redis/valkey size flag, whose 0 takes each input
// kind's own size (RedisShapeOf).
std::string ShapeHelp(absl::string_view what, int RedisShape::*size) {
  WorkloadOptions redis;
  WorkloadOptions valkey;
  valkey.kind = WorkloadKind::kValkey;
  return absl::StrCat("workload:redis and valkey: ", what,
                      " (0: the input's own, redis ", RedisShapeOf(redis).*size,
                      ", valkey ", RedisShapeOf(valkey).*size, ")");
}

class AbVerb : public Verb {
 public:
  enum class Mode { kAb, kSweep };
  explicit AbVerb(Mode mode) : mode_(mode) {}

  absl::string_view summary() const override {
    return mode_ == Mode::kAb
               ? "A/B: run a trace, CSV or workload (or a list of them) "
                 "through several policies"
               : "A/B of one input for every combination of --vary values, "
                 "in parallel, in one table";
  }

  void DefineFlags(FlagSet& flags) override {
    if (mode_ == Mode::kSweep) DefineSweepFlags(flags);
    flags.AddString(
        "--input", "INPUT",
        "trace:PATH or csv:PATH (plain, gzip or zstd; PATH - is stdin; a "
        "trace may also be a trace-cmd .dat file), workload:redis, "
        "workload:valkey (the seed's multi-instance run) or "
        "workload:hackbench",
        &input_);
    if (mode_ == Mode::kAb) {
      flags.AddString("--inputs-file", "LIST",
                      "instead of --input: a file of inputs, one a line (# "
                      "comments; relative paths from LIST's folder), each in "
                      "a session of its own, reported merged",
                      &command_.inputs_file);
      flags.AddString("--shard", "K/N",
                      "with --inputs-file: run only entries i with i % N == K "
                      "(K from 0, as Kubernetes' JOB_COMPLETION_INDEX); "
                      "--json then writes the shard result `ab-merge` reads",
                      &shard_);
    }
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
    flags.AddString("--group-by", "RULE",
                    "cache groups, set on every sample before the session: "
                    "tgid (the default: each process its own, as the input "
                    "says), comm (one group per process name), cgroup (one "
                    "group per cgroup path: traces from `record` only) or "
                    "file:PATH (lines GROUP tgid=N, GROUP N, GROUP comm=NAME "
                    "or GROUP cgroup=PATH; # comments)",
                    &group_by_);
    DefineWorkloadFlags(flags);
    flags.AddInt64("--jobs", "N",
                   mode_ == Mode::kSweep
                       ? "combinations run at once (each on one thread), "
                         "1..1024; the default is the CPUs this process may "
                         "run on (taskset narrows them)"
                       : "threads, 1..1024: with 2 or more, one reads or "
                         "generates the input while another runs the "
                         "policies (or feeds --server); the same result for "
                         "any N; 1: all on one thread; a list of --groups or "
                         "--fds runs N combinations at once instead; the "
                         "default is the CPUs this process may run on "
                         "(taskset narrows them)",
                   &jobs_);
    flags.AddString("--json", "FILE",
                    mode_ == Mode::kSweep
                        ? "write the result as JSON (a SweepReport message)"
                        : "write the result as JSON (an AbReport message; a "
                          "SweepReport with lists of --groups or --fds)",
                    &command_.files.json);
    flags.AddString("--csv", "FILE", "write the policy table as CSV",
                    &command_.files.csv);
    flags.AddString("--html", "FILE", "write a self-contained HTML report",
                    &command_.files.html);
    if (mode_ == Mode::kSweep) return;  // sweeps run in-process, per row
    flags.AddString("--cache-groups-csv", "FILE",
                    "write the cache-group table as CSV, one row per group "
                    "(only the header when no sample named a group; not "
                    "with lists of --groups or --fds)",
                    &command_.files.cache_groups_csv);
    flags.AddString("--scan-trace", "FILE",
                    "write each scan as the seed's tracepoint, one file per "
                    "policy (with --server, streamed from the server: "
                    "WatchScans)",
                    &command_.options.scan_trace);
    flags.AddString("--perfetto", "FILE",
                    "write a Perfetto trace (ui.perfetto.dev): per process "
                    "its preferred LLC per policy, each scan, and the "
                    "busiest ones' occupancy per LLC (with --server, "
                    "streamed from the server: WatchScans)",
                    &command_.options.perfetto);
    flags.AddString("--server", "ADDR",
                    "run the session on schedcached at ADDR (unix:PATH or "
                    "HOST:PORT); default: in this process",
                    &command_.server);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    if (absl::Status s = CheckFlag("--jobs", jobs_, 1, kMaxJobs); !s.ok()) {
      return UsageError(s.message(), err);
    }
    if (absl::Status s = ApplyInputs(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    if (absl::Status s = ApplyCpuMap(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    if (absl::StatusOr<ab::GroupBy> rule = ab::ParseGroupBy(group_by_);
        rule.ok()) {
      command_.options.group_by = *std::move(rule);
    } else {
      return UsageError(
          absl::StrCat("--group-by ", group_by_, ": ", rule.status().message()),
          err);
    }
    command_.options.session.policies =
        absl::StrSplit(policies_, ',', absl::SkipEmpty());
    if (numa_balancing_) {
      command_.options.session.settings.push_back("numa_balancing=true");
    }
    if (absl::Status s = ApplyWorkloadFlags(); !s.ok()) {
      return UsageError(s.message(), err);
    }
    if (mode_ == Mode::kSweep || !list_axes_.empty()) return Sweep(out, err);
    command_.progress = ShowProgress(err);
    command_.options.jobs = static_cast<int>(jobs_);
    absl::Status status = ab::RunAbCommand(command_, out, err);
    if (absl::IsUnimplemented(status)) return UsageError(status.message(), err);
    if (!status.ok()) {
      err << "schedcache ab: " << status << "\n";
      return kExitError;
    }
    return kExitOk;
  }

 private:
  void DefineSweepFlags(FlagSet& flags) {
    flags.AddRepeated(
        "--vary", "KEY=V1,V2,...",
        "repeatable: run every combination of the values; KEY is a tunable "
        "(as --set takes it), topology (SOURCE values), group-by (RULE "
        "values), seed, or a workload "
        "flag without its dashes (groups, fds, instances, server-threads, "
        "client-threads, duration-ms, spill-probability, hz); integer "
        "ranges as A..B",
        &vary_);
  }

  // Sweep runs the sweep of --vary (sweep) or of the --groups and --fds
  // lists (ab: the seed's hackbench table).
  int Sweep(std::ostream& out, std::ostream& err) {
    std::vector<SweepAxis> axes = list_axes_;
    for (const std::string& vary : vary_) {
      absl::StatusOr<SweepAxis> axis = ab::ParseVary(vary);
      if (!axis.ok()) return UsageError(axis.status().message(), err);
      axes.push_back(*std::move(axis));
    }
    ab::SweepCommand sweep{.base = command_.options,
                           .axes = std::move(axes),
                           .input = input_,
                           .jobs = static_cast<int>(jobs_),
                           .layout = mode_ == Mode::kAb
                                         ? SweepLayout::kHackbench
                                         : SweepLayout::kSweep,
                           .files = command_.files,
                           .progress = ShowProgress(err)};
    absl::Status status = ab::RunSweepCommand(sweep, out, err);
    // InvalidArgument: the plan refused a --vary value before any run.
    if (absl::IsInvalidArgument(status)) return UsageError(status.message(), err);
    return status.ok() ? kExitOk : Failure(status, err);
  }

  // ApplyGroupsAndFds reads --groups and --fds, each one value or a list.
  // In ab, a list of either makes both axes of the seed's hackbench table;
  // in a sweep a list is one more --vary.
  absl::Status ApplyGroupsAndFds() {
    ASSIGN_OR_RETURN(IntegerList groups_list, ParseIntegers("groups", groups_));
    ASSIGN_OR_RETURN(IntegerList fds_list, ParseIntegers("fds", fds_));
    SweepAxis& groups = groups_list.axis;
    SweepAxis& fds = fds_list.axis;
    const bool lists = groups.values.size() > 1 || fds.values.size() > 1;
    if (lists && mode_ == Mode::kAb) {
      if (command_.options.input.kind != ab::AbInputSpec::Kind::kWorkload ||
          command_.options.input.workload != WorkloadKind::kHackbench ||
          !command_.server.empty() || !command_.options.scan_trace.empty() ||
          !command_.options.perfetto.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--groups ", groups_, " --fds ", fds_, ": lists take --input "
            "workload:hackbench, in-process, without --scan-trace or "
            "--perfetto"));
      }
      list_axes_ = {groups, fds};
    } else if (lists) {
      for (SweepAxis* axis : {&groups, &fds}) {
        if (axis->values.size() > 1) list_axes_.push_back(*axis);
      }
    }
    // A list's first value is the base; the sweep replaces it per row.
    groups_value_ = groups_list.first;
    fds_value_ = fds_list.first;
    return absl::OkStatus();
  }

  // IntegerList is a flag's integers as a sweep axis, and the first.
  struct IntegerList {
    SweepAxis axis;
    int64_t first = 0;
  };

  // ParseIntegers reads `--KEY TEXT` as one integer or a list of them,
  // naming the flag as typed.
  static absl::StatusOr<IntegerList> ParseIntegers(absl::string_view key,
                                                   absl::string_view text) {
    const std::string flag = absl::StrCat("--", key, " ", text);
    IntegerList list;
    list.axis.key = std::string(key);
    ASSIGN_OR_RETURN(list.axis.values, ab::ParseSweepValues(text, flag));
    for (size_t i = list.axis.values.size(); i-- > 0;) {
      if (!absl::SimpleAtoi(list.axis.values[i], &list.first)) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": ", list.axis.values[i], " is not an integer"));
      }
    }
    return list;  // the loop ends on the first value
  }

  int Failure(const absl::Status& status, std::ostream& err) const {
    err << "schedcache " << name() << ": " << status << "\n";
    return kExitError;
  }

  absl::string_view name() const { return mode_ == Mode::kAb ? "ab" : "sweep"; }

  // PerScanOutputs are the flags whose files take every single scan of one
  // input, with the paths they were given (empty: not asked for).
  std::array<std::pair<absl::string_view, const std::string*>, 2>
  PerScanOutputs() const {
    return {{{"--scan-trace", &command_.options.scan_trace},
             {"--perfetto", &command_.options.perfetto}}};
  }

  void DefineWorkloadFlags(FlagSet& flags) {
    flags.AddInt64("--seed", "N", "workload: random seed", &seed_);
    flags.AddInt64("--duration-ms", "MS", "workload: simulated time",
                   &duration_ms_);
    flags.AddInt64("--instances", "N",
                   ShapeHelp("server+benchmark pairs", &RedisShape::instances),
                   &instances_);
    flags.AddInt64("--server-threads", "N",
                   ShapeHelp("threads per server", &RedisShape::server_threads),
                   &server_threads_);
    flags.AddInt64(
        "--client-threads", "N",
        ShapeHelp("threads per benchmark", &RedisShape::client_threads),
        &client_threads_);
    flags.AddString("--groups", "G",
                    "workload:hackbench: groups (-g); a list G1,G2,... or "
                    "range A..B runs each (ab: with --fds, the seed's "
                    "hackbench table)",
                    &groups_);
    flags.AddString("--fds", "F",
                    "workload:hackbench: fds per group (-f); a list or range "
                    "as --groups",
                    &fds_);
    flags.AddString("--spill-probability", "P",
                    "workload: chance (0..1) that a wake-up ignores the "
                    "preferred LLC and spills elsewhere",
                    &spill_probability_);
  }

  // ApplyInputs takes --input, or --inputs-file and its --shard.
  absl::Status ApplyInputs() {
    if (input_.empty() == command_.inputs_file.empty()) {
      return absl::InvalidArgumentError(mode_ == Mode::kAb
                                            ? "give one of --input and --inputs-file"
                                            : "give --input");
    }
    if (!command_.inputs_file.empty()) {
      for (const auto& [flag, path] : PerScanOutputs()) {
        if (!path->empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              flag, " takes one --input, not --inputs-file (every input "
              "would write the same files)"));
        }
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
    RETURN_IF_ERROR(ApplyGroupsAndFds());
    RETURN_IF_ERROR(CheckFlag("--hz", hz_, 1, kMaxHz));
    RETURN_IF_ERROR(CheckFlag("--duration-ms", duration_ms_, 1, kUnbounded));
    RETURN_IF_ERROR(
        CheckFlag("--instances", instances_, 0, kMaxWorkloadThreads));
    RETURN_IF_ERROR(
        CheckFlag("--server-threads", server_threads_, 0, kMaxWorkloadThreads));
    RETURN_IF_ERROR(
        CheckFlag("--client-threads", client_threads_, 0, kMaxWorkloadThreads));
    RETURN_IF_ERROR(
        CheckFlag("--groups", groups_value_, 1, kMaxWorkloadThreads));
    // hackbench runs 2 * groups * fds workers.
    RETURN_IF_ERROR(CheckFlag("--fds", fds_value_, 1,
                              kMaxWorkloadThreads / (2 * groups_value_)));
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
    w.instances = static_cast<int>(instances_);
    w.server_threads = static_cast<int>(server_threads_);
    w.client_threads = static_cast<int>(client_threads_);
    w.groups = static_cast<int>(groups_value_);
    w.fds = static_cast<int>(fds_value_);
    w.kind = command_.options.input.workload;
    w.hz = command_.options.hz;
    RETURN_IF_ERROR(CheckRedisThreads(w));
    return ValidateWorkloadOptions(w);
  }

  // CheckRedisThreads bounds the threads of all the instances together, by
  // the flags' names and the sizes they resolve to.
  static absl::Status CheckRedisThreads(const WorkloadOptions& w) {
    if (w.kind == WorkloadKind::kHackbench) return absl::OkStatus();
    const RedisShape shape = RedisShapeOf(w);
    const int64_t threads = int64_t{shape.instances} *
                            (shape.server_threads + shape.client_threads);
    if (threads <= kMaxWorkloadThreads) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "--instances ", shape.instances, " x (--server-threads ",
        shape.server_threads, " + --client-threads ", shape.client_threads,
        ") = ", threads, " threads: must be at most ", kMaxWorkloadThreads));
  }

  // ShowProgress: a progress line only when the diagnostics go to a
  // terminal.
  static bool ShowProgress(const std::ostream& err) {
    return &err == &std::cerr && isatty(STDERR_FILENO) == 1;
  }

  int UsageError(absl::string_view message, std::ostream& err) {
    err << "schedcache " << name() << ": " << message << "\n";
    return kExitUsage;
  }

  std::string input_;
  std::string shard_;
  std::string cpu_map_;
  std::string group_by_ = "tgid";
  // A string so that the message can repeat what was typed; the default is
  // the workload generator's.
  std::string spill_probability_ =
      absl::StrCat(WorkloadOptions{}.spill_probability);
  std::string policies_ = kDefaultPolicies;
  bool numa_balancing_ = false;
  int64_t hz_ = kDefaultHz;
  int64_t seed_ = 1;
  int64_t duration_ms_ = 1000;
  // 0: the input's own size (RedisShapeOf).
  int64_t instances_ = 0;
  int64_t server_threads_ = 0;
  int64_t client_threads_ = 0;
  // --groups and --fds as typed (one value or a list), and their first
  // values.
  std::string groups_ = absl::StrCat(WorkloadOptions{}.groups);
  std::string fds_ = absl::StrCat(WorkloadOptions{}.fds);
  int64_t groups_value_ = 0;
  int64_t fds_value_ = 0;
  std::vector<SweepAxis> list_axes_;  // from lists in --groups and --fds
  std::vector<std::string> vary_;
  int64_t jobs_ = UsableCpus();
  const Mode mode_;
  ab::AbCommand command_;
};

}  // namespace

std::unique_ptr<Verb> MakeAbVerb() {
  return std::make_unique<AbVerb>(AbVerb::Mode::kAb);
}

std::unique_ptr<Verb> MakeSweepVerb() {
  return std::make_unique<AbVerb>(AbVerb::Mode::kSweep);
}

}  // namespace schedcache::cli
