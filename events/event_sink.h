// EventSink: where trace replay, the sample CSV and the workload generator
// deliver the model's inputs (events/event.h), one event at a time, in time
// order.
//
// Both producers guarantee: timestamps never decrease, globally (and so per
// CPU, which the engine requires); on one CPU a switch-out Sample comes
// before the HandOver of the same switch.
//
// Thread contract: a producer calls its sink from one thread only; a sink
// needs no locking unless it shares state elsewhere.
#ifndef SCHEDCACHE_EVENTS_EVENT_SINK_H_
#define SCHEDCACHE_EVENTS_EVENT_SINK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "events/event.h"

namespace schedcache {

class EventSink {
 public:
  virtual ~EventSink() = default;

  // OnSample receives one runtime sample. A non-OK status stops the
  // producer, which returns that status to its caller.
  virtual absl::Status OnSample(const Sample& sample) = 0;
  // OnHandOver receives one CPU hand-over (tgid 0, tid 0: the CPU went
  // idle). A non-OK status stops the producer.
  virtual absl::Status OnHandOver(const HandOver& hand_over) = 0;
  // OnProcessExit receives the exit of a process (its group leader's
  // sched_process_exit). A non-OK status stops the producer.
  virtual absl::Status OnProcessExit(const ProcessExit& exit) = 0;
  // OnProcessStart receives the start of a process's new group (a fork
  // with a new address space, or an exec). Inputs that see no forks or
  // execs (the workload generator, the sample CSV) never call it. A sink
  // that does not take them refuses, so none is dropped unseen; a non-OK
  // status stops the producer.
  virtual absl::Status OnProcessStart(const ProcessStart& start) {
    return absl::UnimplementedError(absl::StrCat(
        "process start of tgid ", start.tgid, " at ", start.timestamp_ns,
        ": this consumer does not take process starts"));
  }
  // OnKernelDecision receives one decision of the running kernel
  // (events/event.h). Inputs that carry none never call it. A sink that
  // does not take them refuses, so none is dropped unseen; a non-OK status
  // stops the producer.
  virtual absl::Status OnKernelDecision(const KernelDecision& decision) {
    return absl::UnimplementedError(absl::StrCat(
        "kernel decision of tgid ", decision.tgid, " at ",
        decision.timestamp_ns, ": this consumer does not take kernel decisions"));
  }
  // OnInputLine says that the events that follow come from line `line`
  // (1-based) of the input file, so that a sink can name the line of an
  // event it refuses. Producers without lines (the workload generator)
  // never call it.
  virtual void OnInputLine(int64_t /*line*/) {}
};

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_EVENT_SINK_H_
