#include "client/cli/topology_output.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"
#include "topology/topology_proto.h"

namespace schedcache::cli {
namespace {

// HumanSize writes whole KiB/MiB/GiB when exact, bytes otherwise; "-" when
// the size is unknown.
std::string HumanSize(int64_t bytes) {
  if (bytes <= 0) return "-";
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrCat(bytes, " ", kUnits[unit]);
}

}  // namespace

std::string TopologyTable(const Topology& topology) {
  std::string out = absl::StrCat("source: ", topology.source(), "\n",
                                 topology.Summary(), "\n");
  if (!(topology.online_cpus() == topology.all_cpus())) {
    absl::StrAppend(&out, "online CPUs: ", topology.online_cpus().ToString(),
                    "\n");
  }
  absl::StrAppendFormat(&out, "%-5s %-6s %-9s %-5s %s\n", "LLC", "LEVEL",
                        "SIZE", "CPUS", "CPU LIST");
  for (const Llc& llc : topology.llcs()) {
    const std::string level =
        llc.synthesized ? "none" : absl::StrCat("L", llc.level);
    absl::StrAppendFormat(&out, "%-5d %-6s %-9s %-5d %s\n", llc.id, level,
                          HumanSize(llc.size_bytes), llc.cpus.Count(),
                          llc.cpus.ToString());
  }
  return out;
}

absl::StatusOr<std::string> TopologyJson(const Topology& topology) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(
      TopologyToProto(topology), &json, options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot print topology as JSON: ", status.ToString()));
  }
  return json;
}

}  // namespace schedcache::cli
