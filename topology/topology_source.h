// Topology sources: where a Topology comes from. The host (hwloc discovery of
// this machine), an hwloc synthetic description, or an hwloc XML export of
// any machine, so that a 384-CPU server can be modelled anywhere.
//
// hwloc is an implementation detail of topology_source.cc; no hwloc type
// appears here.
//
// Thread contract: the functions are thread-safe (each call builds and frees
// its own hwloc topology).
#ifndef SCHEDCACHE_TOPOLOGY_TOPOLOGY_SOURCE_H_
#define SCHEDCACHE_TOPOLOGY_TOPOLOGY_SOURCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "topology/topology.h"

namespace schedcache {

// kHostSource names this machine.
inline constexpr absl::string_view kHostSource = "host";

// kEpyc9654Shape is the built-in large topology: the LLC shape of a 2-socket
// AMD EPYC 9654 (Genoa) in NPS1 mode: 2 packages, each one NUMA node of
// 12 L3s of 8 cores x 2 threads, 384 CPUs. hwloc numbers synthetic CPUs
// sequentially, so its first LLC is CPUs 0-15 where the real machine's is
// 0-7,192-199; the shape is what matters to the model.
inline constexpr absl::string_view kEpyc9654Shape =
    "synthetic:pack:2 numa:1 l3:12 core:8 pu:2";

// TopologyLimits bounds what a synthetic or XML source may describe. hwloc's
// time to build a topology grows faster than linearly with the CPUs under one
// object (one core of 12,000 PUs takes about 20 s, of 30,000 minutes), so the
// bound is checked before hwloc builds anything: on a synthetic description
// by multiplying its levels' counts, on XML by counting the PU objects as
// hwloc exports write them (`type="PU"`), and again, exactly, once hwloc has
// read the XML and before it is converted. The host is never bounded: it is
// the machine itself, not input.
struct TopologyLimits {
  int64_t max_cpus = 16'384;
  // how_to_raise ends the error message, e.g. "flag --max_topology_cpus";
  // empty adds nothing.
  std::string how_to_raise;
  // xml_read_time bounds hwloc's reading of XML (in a reader process, see
  // LoadTopologyFromXml). An export of 16,384 CPUs (17 MB) reads in under a
  // second here, in a few under ASan.
  absl::Duration xml_read_time = absl::Seconds(30);
};

// LoadTopology builds a Topology from `source`, one of
//   "host"               hwloc discovery of this machine (online CPUs only
//                        are usable; I/O devices are not discovered);
//   "synthetic:DESC"     an hwloc synthetic description, e.g.
//                        "synthetic:pack:2 l3:12 core:8 pu:2";
//   "xml:PATH"           an hwloc XML export (lstopo --of xml).
// The LLC of a CPU is the largest data or unified cache containing it (L3
// normally, L2 where there is no L3); a CPU with no cache gets an LLC of its
// own. Returns NotFound for an unreadable XML file and InvalidArgument for an
// unknown prefix, content hwloc rejects, or more CPUs than `limits.max_cpus`
// (the message names the source, the CPU count and the limit); messages name
// the source.
absl::StatusOr<Topology> LoadTopology(absl::string_view source,
                                      const TopologyLimits& limits = {});

// CheckSyntheticSource returns the error LoadTopology would give a
// "synthetic:DESC" source for its form or its CPU count, without building
// anything (microseconds, where the build may take minutes). hwloc's parser
// reads the levels of a description with attached memory ("[numa]"), so
// that hwloc never refuses one after reading it whole (it leaks the items).
absl::Status CheckSyntheticSource(absl::string_view source,
                                  const TopologyLimits& limits = {});

// LoadTopologyFromXml builds a Topology from the bytes of an hwloc XML export.
// `name` becomes Topology::source() and appears in error messages. Returns
// InvalidArgument when hwloc cannot read the bytes, they describe no CPUs,
// more than `limits.max_cpus` or a CPU os index of 4 times that or more.
// hwloc reads the bytes in a reader process (topology/reader_process.h): XML
// that crashes hwloc, or keeps it busy past `limits.xml_read_time`, is
// InvalidArgument saying so, and the caller lives on. Internal when no
// reader process can be started (the message says why).
absl::StatusOr<Topology> LoadTopologyFromXml(absl::string_view xml_bytes,
                                             absl::string_view name,
                                             const TopologyLimits& limits = {});

// ReadTopologyXml reads the file of an "xml:PATH" source, for a caller that
// sends the bytes elsewhere (the CLI uploads them). Returns NotFound naming
// the source, the path and the OS's reason when it cannot be read.
absl::StatusOr<std::string> ReadTopologyXml(absl::string_view source);

}  // namespace schedcache

#endif  // SCHEDCACHE_TOPOLOGY_TOPOLOGY_SOURCE_H_
