// RecordingSink: an EventSink that keeps every event in memory, in arrival
// order. For tests and small tools; memory grows with the stream.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVENTS_RECORDING_SINK_H_
#define SCHEDCACHE_EVENTS_RECORDING_SINK_H_

#include <optional>
#include <variant>
#include <vector>

#include "events/event_sink.h"

namespace schedcache {

class RecordingSink : public EventSink {
 public:
  // Event is one recorded event: a Sample or a HandOver (the engine's
  // Event, so a recording replays through Engine::ApplyBatch as it is).
  using Event = ::schedcache::Event;

  absl::Status OnSample(const Sample& sample) override {
    events_.emplace_back(sample);
    return absl::OkStatus();
  }
  absl::Status OnHandOver(const HandOver& hand_over) override {
    events_.emplace_back(hand_over);
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
// CpuOf returns the CPU of a sample or hand-over; none for a ProcessExit,
// which names no CPU.
inline std::optional<int32_t> CpuOf(const RecordingSink::Event& e) {
  if (const Sample* s = std::get_if<Sample>(&e)) return s->cpu;
  if (const HandOver* h = std::get_if<HandOver>(&e)) return h->cpu;
  return std::nullopt;
}

}  // namespace schedcache

#endif  // SCHEDCACHE_EVENTS_RECORDING_SINK_H_
