// AbCollector gathers, while an A/B evaluation runs, what the report needs
// beyond the session's own summary: per process its runtime, comm and the
// preferred LLC of each policy (final value, and change points over time),
// and per policy the exact distribution of CPUs scanned. It can also stream
// every scan to a ScanTraceWriter (`--scan-trace`).
//
// Memory is bounded for long traces: the change points of each process and
// policy are capped at kMaxChangesPerTimeline (later ones are dropped, and
// counted); only the kMaxTimelines busiest processes keep them in the result.
//
// Thread contract: thread-compatible; feed it from one thread.
#ifndef SCHEDCACHE_EVAL_AB_AB_COLLECTOR_H_
#define SCHEDCACHE_EVAL_AB_AB_COLLECTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "eval/ab/ab_session.h"
#include "eval/report/ab_result.h"
#include "eval/report/scan_trace.h"

namespace schedcache::ab {

// kMaxChangesPerTimeline caps one process's change points under one policy.
inline constexpr size_t kMaxChangesPerTimeline = 4096;

class AbCollector : public AbObserver {
 public:
  // `policies` names the session's policies in order; `max_cpus_scanned`
  // bounds the histogram (larger counts clamp to it). `scan_trace` (not
  // owned, may be null) receives every scan.
  AbCollector(std::vector<std::string> policies, int max_cpus_scanned,
              ScanTraceWriter* scan_trace);

  // OnSample charges the sample's runtime to its process (the sum
  // saturates at INT64_MAX).
  void OnSample(const Sample& sample);

  void OnScan(const ScanObservation& scan) override;
  void OnPreferenceChange(const PreferenceChange& change) override;
  // wants_scans: the scan trace needs every scan; the histograms alone are
  // not worth a server's scan stream.
  bool wants_scans() const override { return scan_trace_ != nullptr; }

  // status is the first error of the scan trace writer, if any.
  const absl::Status& status() const { return status_; }
  // dropped_changes counts change points beyond kMaxChangesPerTimeline.
  uint64_t dropped_changes() const { return dropped_changes_; }

  // Build assembles the result from the session's report and `input`.
  // `with_histograms`: the session reported every scan (else the
  // histograms stay empty rather than show a partial picture).
  AbResult Build(const EngineReport& report, AbInput input,
                 bool with_histograms) const;

 private:
  struct Process {
    int32_t tgid = 0;
    std::string comm;
    bool comm_from_leader = false;  // comm came from thread tid == tgid
    int64_t runtime_ns = 0;
    std::vector<int> llc;  // per policy, current
    std::vector<std::vector<LlcChange>> changes;  // per policy
  };

  Process& ProcessOf(int32_t tgid);
  int PolicyIndex(std::string_view name) const;

  std::vector<std::string> policies_;
  int max_cpus_scanned_;
  ScanTraceWriter* scan_trace_;
  absl::Status status_;
  std::vector<std::vector<uint64_t>> histograms_;  // [policy][cpus_scanned]
  absl::flat_hash_map<int32_t, size_t> index_of_;  // tgid -> processes_
  std::vector<Process> processes_;
  uint64_t dropped_changes_ = 0;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_COLLECTOR_H_
