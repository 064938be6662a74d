#include "bench/workload_trace.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "events/event_sink.h"
#include "trace/ftrace_writer.h"

namespace schedcache {
namespace {

struct ThreadName {
  int32_t tgid = 0;
  std::string comm;
};
using ThreadNames = absl::flat_hash_map<int32_t, ThreadName>;

// NameCollector keeps the tgid and comm of every thread that has a sample.
class NameCollector : public EventSink {
 public:
  absl::Status OnSample(const Sample& sample) override {
    names_.try_emplace(sample.tid,
                       ThreadName{sample.tgid, std::string(sample.comm.view())});
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver&) override { return absl::OkStatus(); }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return NoExits(exit);
  }

  static absl::Status NoExits(const ProcessExit& exit) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload trace: process ", exit.tgid, " exits at ", exit.timestamp_ns,
        " ns; generated workloads have no exits to write"));
  }

  ThreadNames Take() { return std::move(names_); }

 private:
  ThreadNames names_;
};

// SwitchWriter writes one sched_switch line per hand-over; samples are
// what a replay derives from those lines, so they are not written.
class SwitchWriter : public EventSink {
 public:
  SwitchWriter(ThreadNames names, FtraceWriter& writer)
      : names_(std::move(names)), writer_(writer) {}

  absl::Status OnSample(const Sample&) override { return absl::OkStatus(); }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    if (static_cast<size_t>(hand_over.cpu) >= current_.size()) {
      current_.resize(hand_over.cpu + 1, 0);
    }
    int32_t& current = current_[hand_over.cpu];
    // A thread that ran but was never sampled (switched in at the very
    // end) has no name; the idle task's is per CPU, as in the kernel.
    const std::string idle = absl::StrCat("swapper/", hand_over.cpu);
    writer_.Write(FormatSwitchLine(
        hand_over.timestamp_ns, hand_over.cpu, Task(current, idle),
        /*prev_state=*/1, Task(hand_over.tid, idle)));
    current = hand_over.tid;
    last_switch_ns_ = hand_over.timestamp_ns;
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    return NameCollector::NoExits(exit);
  }

  int64_t last_switch_ns() const { return last_switch_ns_; }

 private:
  TraceTask Task(int32_t tid, const std::string& idle) const {
    if (tid == 0) return TraceTask{idle, 0, 0};
    const auto it = names_.find(tid);
    if (it == names_.end()) return TraceTask{"unsampled", tid, 0};
    return TraceTask{it->second.comm, tid, it->second.tgid};
  }

  const ThreadNames names_;
  FtraceWriter& writer_;
  std::vector<int32_t> current_;  // CPU -> tid handed the CPU last; 0: idle
  int64_t last_switch_ns_ = 0;
};

}  // namespace

absl::StatusOr<WorkloadTraceStats> WriteWorkloadTrace(
    const Topology& topology, const WorkloadOptions& options,
    const std::string& path) {
  NameCollector collector;
  RETURN_IF_ERROR(RunWorkload(topology, options, PreferredLlcFn(), collector)
                      .status());
  ASSIGN_OR_RETURN(std::unique_ptr<FtraceWriter> file,
                   FtraceWriter::Open(path));
  SwitchWriter writer(collector.Take(), *file);
  ASSIGN_OR_RETURN(
      const WorkloadStats generated,
      RunWorkload(topology, options, PreferredLlcFn(), writer));
  RETURN_IF_ERROR(file->Close());
  return WorkloadTraceStats{file->lines(), generated.samples,
                            writer.last_switch_ns()};
}

}  // namespace schedcache
