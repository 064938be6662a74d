// Fuzz target: the bytes of an hwloc XML export (the CLI's xml:PATH
// sources, CreateSession's topology.xml), through LoadTopologyFromXml:
// hwloc's XML import in a reader process, then Topology::Create here. hwloc
// 2.9 crashes on some XML; what must hold is that the caller never does.
// Besides the sanitizers, every topology it builds must keep topology.h's
// promises (CheckTopologyInvariants). libFuzzer sees the coverage of this
// process only, not of the reader's.
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/topology_fuzzing.h"
#include "topology/topology_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::StatusOr<schedcache::Topology> topology =
      schedcache::LoadTopologyFromXml(
          absl::string_view(reinterpret_cast<const char*>(data), size),
          "fuzz.xml", schedcache::FuzzTopologyLimits());
  if (topology.ok()) schedcache::CheckTopologyInvariants(*topology);
  return 0;
}
