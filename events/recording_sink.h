// RecordingSink: an EventSink that keeps every event in memory, in arrival
// order. For tests and small tools; memory grows with the stream.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVENTS_RECORDING_SINK_H_
#define SCHEDCACHE_EVENTS_RECORDING_SINK_H_

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "events/event_sink.h"

namespace schedcache {

class RecordingSink : public EventSink {
 public:
  // Event is one recorded event: a Sample, HandOver, ProcessExit,
  // ProcessStart or KernelDecision (the engine's Event, so a recording replays through
  // Engine::ApplyBatch as it is).
  using Event = ::schedcache::Event;

  absl::Status OnSample(const Sample& sample) override {
    events_.emplace_back(sample);
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    events_.emplace_back(hand_over);
    return absl::OkStatus();
  }
  absl::Status OnProcessExit(const ProcessExit& exit) override {
    events_.emplace_back(exit);
    return absl::OkStatus();
  }
  absl::Status OnProcessStart(const ProcessStart& start) override {
    events_.emplace_back(start);
    return absl::OkStatus();
  }
  absl::Status OnKernelDecision(const KernelDecision& decision) override {
    events_.emplace_back(decision);
    return absl::OkStatus();
  }

  const std::vector<Event>& events() const { return events_; }

  // Samples returns the samples only, in order.
  std::vector<Sample> Samples() const {
    std::vector<Sample> out;
    for (const Event& e : events_) {
      if (const Sample* s = std::get_if<Sample>(&e)) out.push_back(*s);
    }
    return out;
  }
  // HandOvers returns the hand-overs only, in order.
  std::vector<HandOver> HandOvers() const {
    std::vector<HandOver> out;
    for (const Event& e : events_) {
      if (const HandOver* h = std::get_if<HandOver>(&e)) out.push_back(*h);
    }
    return out;
  }

 private:
  std::vector<Event> events_;
};

// TimestampOf returns the timestamp of any event.
inline int64_t TimestampOf(const RecordingSink::Event& e) {
  return std::visit([](const auto& v) { return v.timestamp_ns; }, e);
}
// CpuOf returns the CPU of a sample, hand-over or kernel decision; none
// for a ProcessExit or ProcessStart, which name no CPU.
inline std::optional<int32_t> CpuOf(const RecordingSink::Event& e) {
  if (const Sample* s = std::get_if<Sample>(&e)) return s->cpu;
  if (const HandOver* h = std::get_if<HandOver>(&e)) return h->cpu;
  if (const KernelDecision* k = std::get_if<KernelDecision>(&e)) return k->cpu;
  return std::nullopt;
}

// EventText shows an event with every field on one line, so that two
// recordings compare field by field in a test and a difference reads.
inline std::string EventText(const RecordingSink::Event& e) {
  using std::to_string;
  if (const Sample* s = std::get_if<Sample>(&e)) {
    return "sample " + to_string(s->timestamp_ns) + " cpu " +
           to_string(s->cpu) + " " + to_string(s->tgid) + "/" +
           to_string(s->tid) + " +" + to_string(s->delta_ns) +
           (s->tick ? " tick" : "") + " threads " + to_string(s->nr_threads) +
           " node " + to_string(s->numa_node) + " pages " +
           to_string(s->footprint_pages) + " comm " +
           std::string(s->comm.view());
  }
  if (const HandOver* h = std::get_if<HandOver>(&e)) {
    return "hand-over " + to_string(h->timestamp_ns) + " cpu " +
           to_string(h->cpu) + " " + to_string(h->tgid) + "/" +
           to_string(h->tid);
  }
  if (const KernelDecision* k = std::get_if<KernelDecision>(&e)) {
    return "kernel " + to_string(k->timestamp_ns) + " cpu " +
           to_string(k->cpu) + " " + to_string(k->tgid) + "/" +
           to_string(k->tid) + " pref " + to_string(k->preferred_cpu) +
           (k->scanned ? " scanned" : "") + " avg " +
           to_string(k->nr_running_avg) + " pages " +
           to_string(k->footprint) + " group " + to_string(k->group) +
           " jiffies " + to_string(k->jiffies) + " epoch " +
           to_string(k->group_epoch) + " next " + to_string(k->next_scan) +
           " cpu_epoch " + to_string(k->cpu_epoch) + " cpu_next " +
           to_string(k->cpu_epoch_next);
  }
  if (const ProcessStart* start = std::get_if<ProcessStart>(&e)) {
    return "start " + to_string(start->timestamp_ns) + " " +
           to_string(start->tgid);
  }
  const ProcessExit& exit = std::get<ProcessExit>(e);
  return "exit " + to_string(exit.timestamp_ns) + " " + to_string(exit.tgid);
}

// EventTexts is EventText of each event of `sink`, in order.
inline std::vector<std::string> EventTexts(const RecordingSink& sink) {
  std::vector<std::string> texts;
  for (const RecordingSink::Event& e : sink.events()) {
    texts.push_back(EventText(e));
  }
  return texts;
}

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_RECORDING_SINK_H_
