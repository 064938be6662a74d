// Fuzz target: the text after "synthetic:" in a topology source (the CLI's
// --topology and --source, CreateSession's topology.spec), through
// LoadTopology: hwloc's synthetic description parser, then Topology::Create.
// Besides the sanitizers, every topology it builds must keep topology.h's
// promises (CheckTopologyInvariants).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "topology/topology_fuzzing.h"
#include "topology/topology_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string description(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<schedcache::Topology> topology =
      schedcache::LoadTopology(absl::StrCat("synthetic:", description),
                               schedcache::FuzzTopologyLimits());
  if (topology.ok()) schedcache::CheckTopologyInvariants(*topology);
  return 0;
}
