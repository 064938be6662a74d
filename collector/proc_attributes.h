// ProcAttributes reads the per-process attributes docs/LIVE.md gives a live
// sample from /proc, at most once per epoch per process:
//  - nr_threads: the `Threads:` line of /proc/PID/status;
//  - footprint_pages: what the kernel's SCHED_CACHE keeps in
//    mm->sc_stat.footprint, pages counted by NUMA-balancing faults, i.e. the
//    sum of `total_numa_faults` over /proc/PID/task/TID/sched (0 where NUMA
//    balancing is off and the line is absent, as in the kernel);
//  - per thread numa_preferred_node: that file's `numa_preferred_nid`.
// A process or thread that is gone when read is not an error: a process
// leaves no entry (its samples keep the state machine's values), a thread
// is skipped.
//
// Thread contract: thread-compatible (the collector's one thread owns it).
#ifndef SCHEDCACHE_COLLECTOR_PROC_ATTRIBUTES_H_
#define SCHEDCACHE_COLLECTOR_PROC_ATTRIBUTES_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "events/event_sink.h"

namespace schedcache::host {

// ProcessAttributes is one process's attributes as last read.
struct ProcessAttributes {
  int64_t read_at_ns = 0;  // sample time of the read
  int32_t nr_threads = 0;
  int64_t footprint_pages = 0;
  std::string comm;  // /proc/PID/comm, for --comm
  // numa_preferred_nid per thread id; -1: no preferred node.
  absl::flat_hash_map<int32_t, int32_t> preferred_node;
};

// ThreadSchedValues is what a /proc/PID/task/TID/sched file says.
struct ThreadSchedValues {
  int32_t numa_preferred_nid = -1;
  int64_t total_numa_faults = 0;  // 0 when the line is absent
};

// ParseThreadsLine returns the `Threads:` count of a /proc/PID/status text;
// InvalidArgument naming `source` and the line when absent or not a
// positive integer.
absl::StatusOr<int32_t> ParseThreadsLine(absl::string_view status_text,
                                         absl::string_view source);
// ParseThreadSched reads `numa_preferred_nid` and `total_numa_faults` from
// a sched file (lines "key : value"); a missing key keeps its default, a
// value that is not an integer is InvalidArgument naming `source`.
absl::StatusOr<ThreadSchedValues> ParseThreadSched(absl::string_view text,
                                                   absl::string_view source);

class ProcAttributes {
 public:
  // `epoch_ns`: the shortest time between two reads of one process.
  // `proc_root` is where procfs is mounted; tests pass a directory.
  explicit ProcAttributes(int64_t epoch_ns, std::string proc_root = "/proc");

  // Lookup returns `tgid`'s attributes, read again when the last read is
  // at least epoch_ns before `now_ns`; nullptr when the process is gone or
  // its files do not parse (counted in unreadable()); a process found gone
  // is not read again until Forget. The pointer is valid
  // until the next Lookup or Forget.
  const ProcessAttributes* Lookup(int32_t tgid, int64_t now_ns);
  // Forget drops `tgid`, also as gone (its process ended; the pid may be
  // reused).
  void Forget(int32_t tgid);

  int64_t reads() const { return reads_; }
  int64_t unreadable() const { return unreadable_; }

 private:
  absl::StatusOr<ProcessAttributes> Read(int32_t tgid) const;

  const int64_t epoch_ns_;
  const std::string proc_root_;
  absl::flat_hash_map<int32_t, ProcessAttributes> processes_;
  absl::flat_hash_set<int32_t> gone_;  // found gone; not read until Forget
  int64_t reads_ = 0;
  int64_t unreadable_ = 0;
};

// AttributeSink fills each Sample's nr_threads, footprint_pages and
// numa_node from ProcAttributes, then passes it on; hand-overs pass as they
// are. A process /proc no longer has keeps the values the sample came with.
class AttributeSink : public EventSink {
 public:
  // Both must outlive the sink.
  AttributeSink(ProcAttributes& attributes, EventSink& next)
      : attributes_(attributes), next_(next) {}

  absl::Status OnSample(const Sample& sample) override;
  absl::Status OnHandOver(const HandOver& hand_over) override {
    return next_.OnHandOver(hand_over);
  }
  // OnProcessExit forwards the exit, then forgets the process: its pid may
  // be reused by a process whose attributes must be read afresh.
  absl::Status OnProcessExit(const ProcessExit& exit) override;
  // OnProcessStart forwards the start, then forgets the process: after an
  // exec its comm and footprint are the new program's.
  absl::Status OnProcessStart(const ProcessStart& start) override;
  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    return next_.OnKernelDecision(decision);
  }

 private:
  ProcAttributes& attributes_;
  EventSink& next_;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_PROC_ATTRIBUTES_H_
