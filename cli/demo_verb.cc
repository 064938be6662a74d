// `schedcache demo`: the quick-start's main job, the seed's A/B in a few
// seconds: full-scan, visited-scan and none on the seed's multi-instance
// valkey workload (workload:valkey) over the built-in 384-CPU EPYC 9654
// shape, in this process. The first line
// says what this machine is, for comparison.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/verb.h"
#include "eval/ab/ab_command.h"
#include "topology/topology_source.h"

namespace schedcache::cli {
namespace {

// Two seconds of simulated time: thousands of scans per policy, a few
// seconds of wall time on a small machine.
constexpr int64_t kDemoDurationMs = 2000;

class DemoVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "A/B of full-scan, visited-scan and none on the seed's "
           "multi-instance valkey workload over the built-in 384-CPU EPYC "
           "shape";
  }

  void DefineFlags(FlagSet& flags) override {
    flags.AddInt64("--duration-ms", "MS", "simulated time of the workload",
                   &duration_ms_);
    flags.AddInt64("--seed", "N", "workload random seed", &seed_);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    absl::StatusOr<Topology> host = LoadTopology(kHostSource);
    out << "this machine: "
        << (host.ok() ? host->Summary() : std::string(host.status().message()))
        << "\n\n";
    ab::AbCommand command;
    command.options.input.kind = ab::AbInputSpec::Kind::kWorkload;
    command.options.input.workload = WorkloadKind::kValkey;
    command.options.workload.kind = WorkloadKind::kValkey;
    command.options.workload.duration_ns = duration_ms_ * 1'000'000;
    command.options.workload.seed = static_cast<uint64_t>(seed_);
    if (absl::Status s = ValidateWorkloadOptions(command.options.workload);
        !s.ok()) {
      err << "schedcache demo: " << s.message() << "\n";
      return kExitUsage;
    }
    command.progress = &err == &std::cerr && isatty(STDERR_FILENO) == 1;
    if (absl::Status s = ab::RunAbCommand(command, out, err); !s.ok()) {
      err << "schedcache demo: " << s << "\n";
      return kExitError;
    }
    return kExitOk;
  }

 private:
  int64_t duration_ms_ = kDemoDurationMs;
  int64_t seed_ = 1;
};

}  // namespace

std::unique_ptr<Verb> MakeDemoVerb() { return std::make_unique<DemoVerb>(); }

}  // namespace schedcache::cli
