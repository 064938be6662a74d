#include "cli/topology_output.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/topology_proto.h"

namespace schedcache::cli {
namespace {

// HumanSize writes whole KiB/MiB/GiB when exact, bytes otherwise; "-" when
// the size is unknown.
std::string HumanSize(uint64_t bytes) {
  if (bytes == 0) return "-";
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrCat(bytes, " ", kUnits[unit]);
}

// CpuList writes increasing CPU numbers in list form, runs as ranges:
// "0-7,192-199" (the form of CpuSet::ToString, here over a message's list,
// which may come from a server and is not trusted to be small).
std::string CpuList(const google::protobuf::RepeatedField<uint32_t>& cpus) {
  std::string out;
  for (int i = 0; i < cpus.size();) {
    int last = i;
    while (last + 1 < cpus.size() && cpus[last + 1] == cpus[last] + 1) ++last;
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, cpus[i]);
    if (last > i) absl::StrAppend(&out, "-", cpus[last]);
    i = last + 1;
  }
  return out;
}

}  // namespace

v1::GetTopologyResponse DescribeTopology(const Topology& topology) {
  v1::GetTopologyResponse described;
  *described.mutable_topology() = TopologyToProto(topology);
  described.set_summary(topology.Summary());
  return described;
}

std::string TopologyTable(const v1::GetTopologyResponse& described) {
  const v1::Topology& topology = described.topology();
  std::string out = absl::StrCat("source: ", topology.source(), "\n",
                                 described.summary(), "\n");
  if (static_cast<uint64_t>(topology.online_cpus_size()) !=
      topology.total_cpus()) {
    absl::StrAppend(&out, "online CPUs: ", CpuList(topology.online_cpus()),
                    "\n");
  }
  absl::StrAppendFormat(&out, "%-5s %-6s %-9s %-5s %s\n", "LLC", "LEVEL",
                        "SIZE", "CPUS", "CPU LIST");
  for (const v1::Llc& llc : topology.llcs()) {
    const std::string level =
        llc.synthesized() ? "none" : absl::StrCat("L", llc.level());
    absl::StrAppendFormat(&out, "%-5d %-6s %-9s %-5d %s\n", llc.id(), level,
                          HumanSize(llc.size_bytes()), llc.cpus_size(),
                          CpuList(llc.cpus()));
  }
  return out;
}

}  // namespace schedcache::cli
