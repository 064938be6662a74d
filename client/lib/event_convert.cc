#include "client/lib/event_convert.h"

namespace schedcache::client {

void SampleToEvent(const Sample& sample, v1::Event& event) {
  event.set_timestamp_ns(sample.timestamp_ns);
  event.set_cpu(sample.cpu);
  event.set_tgid(sample.tgid);
  event.set_tid(sample.tid);
  event.set_delta_ns(sample.delta_ns);
  event.set_tick(sample.tick);
  if (sample.nr_threads != kUnchangedNrThreads) {
    event.set_nr_threads(sample.nr_threads);
  }
  if (sample.numa_node != kUnchangedNumaNode) {
    event.set_numa_node(sample.numa_node);
  }
  if (sample.footprint_pages != kUnchangedFootprint) {
    event.set_footprint_pages(sample.footprint_pages);
  }
  if (!sample.comm.empty()) {
    const std::string_view comm = sample.comm.view();
    event.set_comm(comm.data(), comm.size());
  }
}

void HandOverToEvent(const HandOver& handover, v1::Event& event) {
  event.set_handover(true);
  event.set_timestamp_ns(handover.timestamp_ns);
  event.set_cpu(handover.cpu);
  event.set_tgid(handover.tgid);
  event.set_tid(handover.tid);
}

}  // namespace schedcache::client
