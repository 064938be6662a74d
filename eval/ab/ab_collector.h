// AbCollector gathers, while an A/B evaluation runs, what the report needs
// beyond the session's own summary: per process its runtime, comm and the
// preferred LLC of each policy (final value, and change points over time),
// per policy the exact distribution of CPUs scanned, and the per-LLC
// occupancy of each process's last scan under each policy (from the scans
// the session reports; the result holds the busiest process's). It can also stream every
// scan to a ScanTraceWriter (`--scan-trace`), and every scan and
// preference change to a PerfettoTraceWriter (`--perfetto`), with the
// reference policy's per-LLC occupancy at each of its scans of a process
// that is among the kMaxTimelines busiest by the runtime it has had so far
// (an exact running top list, as runtime only grows; kept only for a
// PerfettoTraceWriter).
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
#include "eval/ab/ab_result.h"
#include "eval/ab/ab_session.h"
#include "eval/report/perfetto_trace.h"
#include "eval/report/scan_trace.h"

namespace schedcache::ab {

// kMaxChangesPerTimeline caps one process's change points under one policy.
inline constexpr size_t kMaxChangesPerTimeline = 4096;

class AbCollector : public AbObserver {
 public:
  // `policies` names the session's policies in order; `max_cpus_scanned`
  // bounds the histogram (larger counts clamp to it). `scan_trace` and
  // `perfetto` (not owned, may be null) receive every scan.
  // `wants_last_scans`: the result's busiest_last_scan is wanted (an HTML
  // report), worth a server's scan stream.
  AbCollector(std::vector<std::string> policies, int max_cpus_scanned,
              ScanTraceWriter* scan_trace, PerfettoTraceWriter* perfetto,
              bool wants_last_scans = false);

  // OnSample charges the sample's runtime to its process, and to the cache
  // group it names, if any (the sums saturate at INT64_MAX).
  void OnSample(const Sample& sample);
  // NameGroups names the cache groups: group i + 1 is names[i], as
  // `--group-by` numbers them (CacheGroupTable); a group past the end keeps
  // no name.
  void NameGroups(std::vector<std::string> names) {
    group_names_ = std::move(names);
  }

  void OnScan(const ScanObservation& scan) override;
  void OnPreferenceChange(const PreferenceChange& change) override;
  // wants_scans: the scan and Perfetto traces and the last scans need every
  // scan; the histograms alone are not worth a server's scan stream.
  bool wants_scans() const override {
    return scan_trace_ != nullptr || perfetto_ != nullptr || wants_last_scans_;
  }

  // FinishPerfetto gives every process that had no event its track, at its
  // first sample, so the trace lists every traced process. Call once, after
  // the last event; errors land in status().
  void FinishPerfetto();

  // status is the first error of the trace writers, if any.
  const absl::Status& status() const { return status_; }
  // dropped_changes counts change points beyond kMaxChangesPerTimeline.
  uint64_t dropped_changes() const { return dropped_changes_; }

  // Build assembles the result from the session's report and `input`.
  // `with_histograms`: the session reported every scan (else the
  // histograms stay empty rather than show a partial picture). The busiest
  // process's last scans are in the result when some policy's scan of it
  // was heard with its occupancy.
  AbResult Build(const EngineReport& report, AbInput input,
                 bool with_histograms) const;

 private:
  struct Process {
    int32_t tgid = 0;
    std::string comm;
    bool comm_from_leader = false;  // comm came from thread tid == tgid
    bool busiest = false;           // in busiest_
    uint64_t cache_group = 0;       // its last sample's (0: its own)
    int64_t first_sample_ns = -1;   // -1: no sample yet
    int64_t runtime_ns = 0;
    std::vector<int> llc;  // per policy, current
    std::vector<std::vector<LlcChange>> changes;  // per policy
    // Per policy, the per-LLC occupancy its last scan of the process saw;
    // empty until it scans it.
    std::vector<std::vector<LlcOccupancy>> last_occupancy;
  };

  // CacheGroup is what the collector knows of one named cache group.
  struct CacheGroup {
    uint64_t id = 0;
    std::vector<int32_t> member_tgids;  // in order of first sample in it
    int64_t runtime_ns = 0;
  };

  // Busier orders processes busiest first; ties by tgid, so the order
  // never depends on hashing.
  static bool Busier(const Process& a, const Process& b);
  // HasOccupancy: some policy's last scan of `p` reported occupancy.
  static bool HasOccupancy(const Process& p);

  size_t IndexOf(int32_t tgid);
  Process& ProcessOf(int32_t tgid) { return processes_[IndexOf(tgid)]; }
  int PolicyIndex(std::string_view name) const;
  // NoteGroup charges `sample` to the cache group it names, which
  // process `p` (before this sample) may not have been in yet.
  void NoteGroup(const Process& p, const Sample& sample);
  // CacheGroups is the result's cache groups, busiest first, each with the
  // runtime on each policy's preferred LLC that the session's `report`
  // gives for it (none when the report left it out).
  std::vector<CacheGroupResult> CacheGroups(const EngineReport& report) const;
  // NoteRuntime keeps busiest_ the busiest processes after processes_[index]
  // ran more.
  void NoteRuntime(size_t index);
  void WriteScanTraces(const ScanObservation& scan);

  std::vector<std::string> policies_;
  int max_cpus_scanned_;
  ScanTraceWriter* scan_trace_;
  PerfettoTraceWriter* perfetto_;
  bool wants_last_scans_;
  absl::Status status_;
  std::vector<std::vector<uint64_t>> histograms_;  // [policy][cpus_scanned]
  absl::flat_hash_map<int32_t, size_t> index_of_;  // tgid -> processes_
  std::vector<Process> processes_;
  std::vector<size_t> busiest_;  // indices into processes_, at most kMaxTimelines
  absl::flat_hash_map<uint64_t, size_t> group_index_;  // id -> groups_
  std::vector<CacheGroup> groups_;
  std::vector<std::string> group_names_;
  uint64_t dropped_changes_ = 0;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_COLLECTOR_H_
