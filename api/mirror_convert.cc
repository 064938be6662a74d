#include "api/mirror_convert.h"

#include <cstdint>

namespace schedcache {

LlcCpuLists ToLlcCpuLists(const v1::Topology& topology) {
  LlcCpuLists lists(topology.llcs_size());
  for (const v1::Llc& llc : topology.llcs()) {
    if (llc.id() < lists.size()) {
      lists[llc.id()].assign(llc.cpus().begin(), llc.cpus().end());
    }
  }
  return lists;
}

MirroredPreference ToMirroredPreference(const v1::PreferenceChange& entry) {
  return {.tgid = static_cast<uint32_t>(entry.tgid()),
          .llc = entry.new_llc(),
          .cpu = entry.new_cpu()};
}

MirroredChange ToMirroredChange(const v1::PreferenceChange& change) {
  return {.tgid = static_cast<uint32_t>(change.tgid()),
          .llc = change.new_llc(),
          .cpu = change.new_cpu(),
          .reason = static_cast<uint32_t>(change.reason()),
          .incarnation = change.incarnation(),
          .sequence = change.sequence()};
}

}  // namespace schedcache
