#include "eval/ab/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "eval/ab/cache_groups.h"
#include "eval/ab/in_process_session.h"

namespace schedcache::ab {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
// kMaxHz is --hz's bound: Linux's CONFIG_HZ is at most 1000, and a trace's
// gap of up to an hour is filled with a tick per 1/HZ.
constexpr int64_t kMaxHz = 10'000;

// kWorkloadKeys only mean something to a generated workload.
constexpr absl::string_view kWorkloadKeys[] = {
    "seed",           "groups",         "fds",        "instances",
    "server-threads", "client-threads", "duration-ms", "spill-probability"};

bool IsWorkloadKey(absl::string_view key) {
  return std::find(std::begin(kWorkloadKeys), std::end(kWorkloadKeys), key) !=
         std::end(kWorkloadKeys);
}

bool IsTunableKey(absl::string_view key) {
  return key != "topology" && key != "hz" && key != "group-by" &&
         !IsWorkloadKey(key);
}

absl::StatusOr<int64_t> ParseInt(absl::string_view value, int64_t lo,
                                 int64_t hi) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n)) {
    return absl::InvalidArgumentError("not an integer");
  }
  if (n < lo || n > hi) {
    return absl::InvalidArgumentError(absl::StrCat("must be in ", lo, "..", hi));
  }
  return n;
}

// ApplyValue sets `key` to `value` in `options`. Ranges are checked here
// only where no later check would name the flag; the workload's own
// validation checks the rest per combination.
absl::Status ApplyValue(absl::string_view key, const std::string& value,
                        AbOptions& options) {
  WorkloadOptions& w = options.workload;
  if (key == "topology") {
    options.session.topology = value;
  } else if (key == "group-by") {
    ASSIGN_OR_RETURN(options.group_by, ParseGroupBy(value));
    RETURN_IF_ERROR(CheckGroupByInput(options));
  } else if (key == "hz") {
    ASSIGN_OR_RETURN(const int64_t hz, ParseInt(value, 1, kMaxHz));
    options.hz = static_cast<int>(hz);
    w.hz = options.hz;
  } else if (key == "seed") {
    ASSIGN_OR_RETURN(const int64_t seed, ParseInt(value, 0, INT64_MAX));
    w.seed = static_cast<uint64_t>(seed);
  } else if (key == "duration-ms") {
    ASSIGN_OR_RETURN(const int64_t ms, ParseInt(value, 1, INT64_MAX / kNsPerMs));
    w.duration_ns = ms * kNsPerMs;
  } else if (key == "spill-probability") {
    double p = 0;
    if (!absl::SimpleAtod(value, &p) || !std::isfinite(p) || p < 0 || p > 1) {
      return absl::InvalidArgumentError("must be in 0..1");
    }
    w.spill_probability = p;
  } else if (IsWorkloadKey(key)) {  // the thread counts
    ASSIGN_OR_RETURN(const int64_t n, ParseInt(value, 1, kMaxWorkloadThreads));
    int& field = key == "groups"           ? w.groups
                 : key == "fds"            ? w.fds
                 : key == "instances"      ? w.instances
                 : key == "server-threads" ? w.server_threads
                                           : w.client_threads;
    field = static_cast<int>(n);
  } else {
    options.session.settings.push_back(absl::StrCat(key, "=", value));
  }
  return absl::OkStatus();
}

// CheckValue applies one value to `base` alone and checks what can be
// checked for it alone, so the error names that key and value.
absl::Status CheckValue(const AbOptions& base, absl::string_view key,
                        const std::string& value,
                        const PolicyRegistry& registry) {
  AbOptions options = base;
  absl::Status status = ApplyValue(key, value, options);
  if (status.ok() && IsTunableKey(key)) {
    status = ResolveSessionSettings(options.session, registry).status();
  }
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--vary ", key, "=", value, ": ", status.message()));
  }
  return absl::OkStatus();
}

// CheckAxis refuses what no value of `axis` could make right.
absl::Status CheckAxis(const AbOptions& base, const SweepAxis& axis) {
  const std::string& key = axis.key;
  if (IsWorkloadKey(key) && base.input.kind != AbInputSpec::Kind::kWorkload) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--vary ", key, ": a workload flag, but the input is not workload:"));
  }
  if (!IsTunableKey(key)) return absl::OkStatus();
  for (const std::string& setting : base.session.settings) {
    if (absl::StartsWith(setting, absl::StrCat(key, "="))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--vary ", key, ": also given as --set ", setting, "; give one"));
    }
  }
  return absl::OkStatus();
}

absl::Status AddRange(absl::string_view flag, absl::string_view range,
                      std::vector<std::string>& values) {
  const std::pair<absl::string_view, absl::string_view> ends =
      absl::StrSplit(range, absl::MaxSplits("..", 1));
  int64_t from = 0, to = 0;
  if (!absl::SimpleAtoi(ends.first, &from) ||
      !absl::SimpleAtoi(ends.second, &to) || from > to ||
      to - from >= static_cast<int64_t>(kMaxSweepCombinations)) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": range \"", range, "\" is not A..B with integers ",
        "A <= B and at most ", kMaxSweepCombinations, " values"));
  }
  for (int64_t v = from; v <= to; ++v) values.push_back(absl::StrCat(v));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseSweepValues(
    absl::string_view values, absl::string_view flag) {
  std::vector<std::string> parsed;
  for (absl::string_view value : absl::StrSplit(values, ',')) {
    if (value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": empty value"));
    }
    // A range starts with an integer; a path such as xml:../m.xml is a
    // value.
    int64_t first = 0;
    if (const size_t dots = value.find("..");
        dots != absl::string_view::npos &&
        absl::SimpleAtoi(value.substr(0, dots), &first)) {
      RETURN_IF_ERROR(AddRange(flag, value, parsed));
    } else {
      parsed.emplace_back(value);
    }
  }
  absl::flat_hash_set<std::string> seen;
  for (const std::string& value : parsed) {
    if (!seen.insert(value).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": value ", value, " is given twice"));
    }
  }
  return parsed;
}

absl::StatusOr<SweepAxis> ParseVary(absl::string_view text) {
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--vary ", text, ": want KEY=V1,V2,... or KEY=A..B"));
  }
  SweepAxis axis;
  axis.key = std::string(text.substr(0, eq));
  ASSIGN_OR_RETURN(axis.values, ParseSweepValues(text.substr(eq + 1),
                                                 absl::StrCat("--vary ", text)));
  return axis;
}

absl::StatusOr<SweepPlan> MakeSweepPlan(const AbOptions& base,
                                        std::vector<SweepAxis> axes,
                                        const PolicyRegistry& registry) {
  if (axes.empty()) {
    return absl::InvalidArgumentError("a sweep needs at least one --vary");
  }
  size_t combinations = 1;
  absl::flat_hash_set<std::string> keys;
  for (const SweepAxis& axis : axes) {
    if (!keys.insert(axis.key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--vary ", axis.key, ": the key is varied twice"));
    }
    RETURN_IF_ERROR(CheckAxis(base, axis));
    for (const std::string& value : axis.values) {
      RETURN_IF_ERROR(CheckValue(base, axis.key, value, registry));
    }
    combinations *= axis.values.size();
    if (combinations > kMaxSweepCombinations) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the sweep has more than ", kMaxSweepCombinations, " combinations"));
    }
  }
  SweepPlan plan;
  for (size_t c = 0; c < combinations; ++c) {
    // Mixed-radix digits of c, the last axis varying fastest.
    std::vector<std::string> values(axes.size());
    size_t rest = c;
    for (size_t a = axes.size(); a-- > 0;) {
      values[a] = axes[a].values[rest % axes[a].values.size()];
      rest /= axes[a].values.size();
    }
    AbOptions run = base;
    std::vector<std::string> named;
    for (size_t a = 0; a < axes.size(); ++a) {
      RETURN_IF_ERROR(ApplyValue(axes[a].key, values[a], run));
      named.push_back(absl::StrCat(axes[a].key, "=", values[a]));
    }
    if (run.input.kind == AbInputSpec::Kind::kWorkload) {
      run.workload.kind = run.input.workload;
      if (absl::Status s = ValidateWorkloadOptions(run.workload); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--vary ", absl::StrJoin(named, " "), ": ", s.message()));
      }
    }
    plan.values.push_back(std::move(values));
    plan.runs.push_back(std::move(run));
  }
  plan.axes = std::move(axes);
  return plan;
}

SweepResult RunSweep(const SweepPlan& plan, const PolicyRegistry& registry,
                     int jobs, absl::string_view input,
                     const SweepProgress& progress) {
  const size_t total = plan.runs.size();
  std::vector<absl::StatusOr<AbResult>> results(
      total, absl::UnknownError("not run"));
  absl::Mutex mu;
  size_t next = 0;  // guarded by mu
  size_t done = 0;  // guarded by mu
  const SessionMaker make_session = InProcessSessions(registry);
  auto work = [&] {
    while (true) {
      size_t index;
      {
        absl::MutexLock lock(&mu);
        if (next == total) return;
        index = next++;
      }
      // Each slot is written by one worker only; `done` publishes it.
      results[index] = RunAb(plan.runs[index], registry, make_session);
      absl::MutexLock lock(&mu);
      ++done;
    }
  };
  std::vector<std::thread> workers;
  const size_t threads = std::clamp<size_t>(jobs, 1, std::max<size_t>(total, 1));
  for (size_t t = 0; t < threads; ++t) workers.emplace_back(work);
  // Progress is drawn here, on the calling thread, never under the lock.
  for (size_t shown = 0; shown < total;) {
    {
      absl::MutexLock lock(&mu);
      const auto advanced = [&done, &shown] { return done != shown; };
      mu.Await(absl::Condition(&advanced));
      shown = done;
    }
    if (progress) progress(shown, total);
  }
  for (std::thread& worker : workers) worker.join();

  SweepResult sweep;
  sweep.input = std::string(input);
  sweep.axes = plan.axes;
  for (size_t i = 0; i < total; ++i) {
    if (results[i].ok()) {
      sweep.rows.push_back(SweepRow{plan.values[i], *std::move(results[i])});
    } else {
      sweep.failures.push_back(SweepFailure{
          plan.values[i], std::string(results[i].status().message())});
    }
  }
  return sweep;
}

}  // namespace schedcache::ab
