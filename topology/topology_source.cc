#include "topology/topology_source.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "topology/reader_process.h"
#include "topology/xml_reader_wire.h"

namespace schedcache {
namespace {

constexpr absl::string_view kSyntheticPrefix = "synthetic:";
constexpr absl::string_view kXmlPrefix = "xml:";

struct HwlocTopologyDeleter {
  void operator()(hwloc_topology_t topology) const {
    hwloc_topology_destroy(topology);
  }
};
using HwlocTopology =
    std::unique_ptr<std::remove_pointer_t<hwloc_topology_t>,
                    HwlocTopologyDeleter>;

// NewHwlocTopology returns a fresh hwloc topology handle, or
// ResourceExhausted naming the source. It keeps one more handle for the
// life of the process: hwloc loads its plugins (the libxml2 XML backend
// among them) with the first handle and unloads them when the last is
// destroyed; unloaded, libxml2's parser state is lost each time
// (LeakSanitizer reports it), and each topology would pay for loading the
// plugins again.
absl::StatusOr<HwlocTopology> NewHwlocTopology(absl::string_view source) {
  static const hwloc_topology_t kPluginKeeper = [] {
    hwloc_topology_t keeper = nullptr;
    return hwloc_topology_init(&keeper) == 0 ? keeper : nullptr;
  }();
  (void)kPluginKeeper;
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("topology ", source, ": hwloc_topology_init failed"));
  }
  return HwlocTopology(raw);
}

absl::Status SourceError(absl::string_view source, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("topology ", source, ": ", problem));
}

// HwlocRejects is the error for a source hwloc refused to read (its errno
// says why).
absl::Status HwlocRejects(absl::string_view source) {
  return SourceError(
      source, absl::StrCat("hwloc rejects it (", std::strerror(errno), ")"));
}

// WithinLimits is true when `cpus` CPUs fit `limits`.
bool WithinLimits(uint64_t cpus, const TopologyLimits& limits) {
  return cpus <= static_cast<uint64_t>(std::max<int64_t>(limits.max_cpus, 0));
}

// TooManyCpus is the error for a source of `cpus` CPUs beyond the limit;
// UINT64_MAX stands for "at least UINT64_MAX".
absl::Status TooManyCpus(absl::string_view source, uint64_t cpus,
                         const TopologyLimits& limits) {
  std::string problem =
      absl::StrCat("describes ", cpus == UINT64_MAX ? "at least " : "", cpus,
                   " CPUs, more than the limit of ", limits.max_cpus);
  if (!limits.how_to_raise.empty()) {
    absl::StrAppend(&problem, " (", limits.how_to_raise, ")");
  }
  return SourceError(source, problem);
}

// Saturating arithmetic for counts read from input: UINT64_MAX stands for
// "at least UINT64_MAX", so a product of huge counts stays huge.
uint64_t SaturatingProduct(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}
uint64_t SaturatingSum(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// MaxOsIndex bounds the os indexes of a bounded source's CPUs: each is below
// 4 times its CPU limit. hwloc and CpuSet size every bitmap by the largest
// index (one synthetic index of 2^31 took 6.8 GB), and real machines number
// their CPUs densely.
uint64_t MaxOsIndex(const TopologyLimits& limits) {
  return SaturatingProduct(
      static_cast<uint64_t>(std::max<int64_t>(limits.max_cpus, 0)), 4);
}

absl::Status OsIndexTooLarge(absl::string_view source, uint64_t index,
                             const TopologyLimits& limits) {
  return SourceError(source,
                     absl::StrCat("CPU os index ", index, " is not below ",
                                  MaxOsIndex(limits),
                                  " (4 times the CPU limit)"));
}

// SyntheticShape is what ReadSyntheticShape finds in a synthetic
// description without building anything.
struct SyntheticShape {
  uint64_t cpus = 1;  // PUs: the product of the levels' counts
  // The TYPE of each "TYPE:COUNT" level, in order (a bare COUNT has none).
  std::vector<absl::string_view> level_types;
  // The description with each attached memory item ("[...]") blanked out;
  // empty when it has none.
  std::string levels_only;
};

// ReadSyntheticShape reads a synthetic description as hwloc 2.x's synthetic
// backend does (optional attributes "(...)" of the root, then items
// separated by spaces or newlines, each "[...]", memory attached to the
// level above, which adds no CPU, or "[TYPE:]COUNT" with optional
// attributes "(...)"), so the count is never below what hwloc would build.
// hwloc also takes counts in hex, in octal or signed; here a count is
// decimal digits (octal digits read as decimal only count more).
// InvalidArgument names the source and the offset of what cannot be read.
absl::StatusOr<SyntheticShape> ReadSyntheticShape(
    absl::string_view source, absl::string_view description) {
  size_t pos = 0;
  const auto unreadable = [&](absl::string_view problem, size_t at) {
    return SourceError(source, absl::StrCat(problem, " at offset ", at,
                                            " of the description"));
  };
  // SkipPast moves past the next `close` (hwloc looks for it anywhere
  // further on); false when there is none.
  const auto skip_past = [&](char close) {
    const size_t end = description.find(close, pos);
    if (end == absl::string_view::npos) return false;
    pos = end + 1;
    return true;
  };
  if (absl::StartsWith(description, "(") && !skip_past(')')) {
    return unreadable("'(' without ')'", pos);
  }
  SyntheticShape shape;
  while ((pos = description.find_first_not_of(" \n", pos)) !=
         absl::string_view::npos) {
    if (description[pos] == '[') {
      const size_t open = pos;
      if (!skip_past(']')) return unreadable("'[' without ']'", open);
      if (shape.levels_only.empty()) {
        shape.levels_only = std::string(description);
      }
      shape.levels_only.replace(open, pos - open, pos - open, ' ');
      continue;
    }
    if (!absl::ascii_isdigit(description[pos])) {
      const size_t type_start = pos;
      if (!skip_past(':')) {
        return unreadable("a level without \":COUNT\"", pos);
      }
      shape.level_types.push_back(
          description.substr(type_start, pos - 1 - type_start));
    }
    const size_t start = pos;
    uint64_t count = 0;
    for (; pos < description.size() && absl::ascii_isdigit(description[pos]);
         ++pos) {
      count = SaturatingSum(SaturatingProduct(count, 10),
                            static_cast<uint64_t>(description[pos] - '0'));
    }
    // "0x10" is hex to hwloc: refused rather than read as 0.
    if (pos == start ||
        (pos < description.size() && absl::ascii_isalpha(description[pos]))) {
      return unreadable("a level count that is not a decimal number", start);
    }
    if (count == 0) return unreadable("a level of 0 objects", start);
    shape.cpus = SaturatingProduct(shape.cpus, count);
    if (pos < description.size() && description[pos] == '(' &&
        !skip_past(')')) {
      return unreadable("'(' without ')'", pos);
    }
  }
  return shape;
}

// CheckAttachedMemory refuses a description with attached memory items
// ("[numa]") that hwloc 2.9 would refuse after reading all its levels: those
// checks of the levels return without freeing the items, 32 bytes each (fuzz
// findings "[numa:]" and "[num\xc6\x9e\xa2\xa4]", a memory item and no
// level). All of them read the levels alone but one, NUMA nodes both as a
// level and attached, so the levels are first given to hwloc without the
// items, which then has nothing to leak, and a NUMA level is refused here.
absl::Status CheckAttachedMemory(absl::string_view source,
                                 const SyntheticShape& shape) {
  if (shape.levels_only.empty()) return absl::OkStatus();
  for (const absl::string_view level_type : shape.level_types) {
    const std::string text(level_type);
    hwloc_obj_type_t type = HWLOC_OBJ_PU;
    union hwloc_obj_attr_u attributes;
    if (hwloc_type_sscanf(text.c_str(), &type, &attributes,
                          sizeof attributes) == 0 &&
        type == HWLOC_OBJ_NUMANODE) {
      return SourceError(source,
                         "NUMA nodes both as a level and attached (\"[...]\")");
    }
  }
  ASSIGN_OR_RETURN(const HwlocTopology levels, NewHwlocTopology(source));
  if (hwloc_topology_set_synthetic(levels.get(), shape.levels_only.c_str()) !=
      0) {
    return HwlocRejects(source);
  }
  return absl::OkStatus();
}

// CheckSyntheticIndexes accepts the "indexes=" attributes of a synthetic
// description only as a list of decimal os indexes, each below
// MaxOsIndex(limits): hwloc 2.9 aborts on some of its interleaving forms (an
// assert in hwloc_synthetic_process_indexes).
absl::Status CheckSyntheticIndexes(absl::string_view source,
                                   absl::string_view description,
                                   const TopologyLimits& limits) {
  constexpr absl::string_view kIndexes = "indexes=";
  const uint64_t bound = MaxOsIndex(limits);
  for (size_t at = description.find(kIndexes); at != absl::string_view::npos;
       at = description.find(kIndexes, at + kIndexes.size())) {
    const size_t start = at + kIndexes.size();
    const size_t end = std::min(description.find_first_of(" )\n", start),
                                description.size());
    const absl::string_view list = description.substr(start, end - start);
    for (absl::string_view index : absl::StrSplit(list, ',')) {
      uint64_t value = 0;
      if (index.empty() || !absl::c_all_of(index, absl::ascii_isdigit) ||
          !absl::SimpleAtoi(index, &value)) {
        return SourceError(
            source, absl::StrCat("indexes= at offset ", at,
                                 " must be a list of decimal os indexes"));
      }
      if (value >= bound) {
        return SourceError(source,
                           absl::StrCat("os index ", index, " at offset ", at,
                                        " is not below ", bound,
                                        " (4 times the CPU limit)"));
      }
    }
  }
  return absl::OkStatus();
}

// ExportedPuCount counts the PU objects of XML bytes as hwloc's exports
// write them (`type="PU"`): exact for any lstopo export, and cheap enough to
// run before hwloc reads the bytes. A hand-written file may spell the type
// otherwise; Discover counts again, exactly, once hwloc has read it.
uint64_t ExportedPuCount(absl::string_view xml_bytes) {
  constexpr absl::string_view kPuType = "type=\"PU\"";
  uint64_t count = 0;
  for (size_t at = xml_bytes.find(kPuType); at != absl::string_view::npos;
       at = xml_bytes.find(kPuType, at + kPuType.size())) {
    ++count;
  }
  return count;
}

CpuSet FromHwlocBitmap(hwloc_const_bitmap_t bitmap) {
  CpuSet set;
  if (bitmap == nullptr) return set;
  for (int i = hwloc_bitmap_first(bitmap); i >= 0;
       i = hwloc_bitmap_next(bitmap, i)) {
    set.Set(i);
  }
  return set;
}

// IdOf is an object's os index, or its logical index when hwloc does not know
// the os index (some XML exports omit it).
int IdOf(hwloc_obj_t obj) {
  return obj->os_index == HWLOC_UNKNOWN_INDEX
             ? static_cast<int>(obj->logical_index)
             : static_cast<int>(obj->os_index);
}

// LargestCacheAbove is the outermost data or unified cache containing `pu`:
// its last-level cache. Returns nullptr when `pu` has no cache information.
hwloc_obj_t LargestCacheAbove(hwloc_obj_t pu) {
  hwloc_obj_t llc = nullptr;
  for (hwloc_obj_t obj = pu->parent; obj != nullptr; obj = obj->parent) {
    if (hwloc_obj_type_is_dcache(obj->type)) llc = obj;
  }
  return llc;
}

// NumaNodeOfCpu maps each CPU to the first NUMA node (in logical order) whose
// cpuset holds it. Memory-only nodes (Optane, HBM) share the cpuset of a DRAM
// node and come later, so the first match is the CPU's local node.
std::map<int, int> NumaNodeOfCpu(hwloc_topology_t topology) {
  std::map<int, int> node_of;
  const int nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nodes; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, i);
    FromHwlocBitmap(node->cpuset).ForEach(
        [&](int cpu) { node_of.try_emplace(cpu, IdOf(node)); });
  }
  return node_of;
}

// SpecFromHwloc turns a loaded hwloc topology into a TopologySpec. `limits`
// is nullptr for the host; otherwise a CPU os index must be below
// MaxOsIndex(*limits).
absl::StatusOr<TopologySpec> SpecFromHwloc(hwloc_topology_t topology,
                                           absl::string_view source,
                                           const TopologyLimits* limits) {
  const bool is_host = limits == nullptr;
  TopologySpec spec;
  spec.source = std::string(source);
  const std::map<int, int> node_of = NumaNodeOfCpu(topology);
  const int num_cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  const int num_pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  std::map<hwloc_obj_t, size_t> llc_index;
  for (int i = 0; i < num_pus; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PU, i);
    if (pu->os_index == HWLOC_UNKNOWN_INDEX || pu->os_index > INT_MAX) {
      return SourceError(source, absl::StrCat("PU L#", pu->logical_index,
                                              " has no usable os index"));
    }
    if (limits != nullptr && pu->os_index >= MaxOsIndex(*limits)) {
      return OsIndexTooLarge(source, pu->os_index, *limits);
    }
    CpuSpec cpu;
    cpu.os_index = static_cast<int>(pu->os_index);
    // Core logical indexes are unique across the machine (core os indexes
    // repeat per package). A PU without a core is a core of its own.
    hwloc_obj_t core =
        hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu);
    cpu.core = core != nullptr ? static_cast<int>(core->logical_index)
                               : num_cores + i;
    hwloc_obj_t package =
        hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, pu);
    cpu.package = package != nullptr ? IdOf(package) : 0;
    auto node = node_of.find(cpu.os_index);
    cpu.numa_node = node != node_of.end() ? node->second : 0;
    spec.cpus.push_back(cpu);

    hwloc_obj_t cache = LargestCacheAbove(pu);
    if (cache == nullptr) continue;
    auto [it, inserted] = llc_index.try_emplace(cache, spec.llcs.size());
    if (inserted) {
      spec.llcs.push_back(CacheSpec{
          static_cast<int>(cache->attr->cache.depth),
          static_cast<int64_t>(cache->attr->cache.size), CpuSet()});
    }
    spec.llcs[it->second].cpus.Set(cpu.os_index);
  }
  if (is_host) {
    CpuSet all;
    for (const CpuSpec& cpu : spec.cpus) all.Set(cpu.os_index);
    spec.online =
        FromHwlocBitmap(hwloc_topology_get_allowed_cpuset(topology)) & all;
  }
  return spec;
}

// ReadSpec loads an hwloc topology from the backend `select` chooses (it
// returns hwloc's 0 / -1) and describes it as a TopologySpec. `limits` is
// nullptr for the host; otherwise a topology of more CPUs is refused as soon
// as hwloc has read it, before the conversion (which costs more per CPU).
absl::StatusOr<TopologySpec> ReadSpec(
    absl::string_view source, const TopologyLimits* limits,
    absl::FunctionRef<int(hwloc_topology_t)> select) {
  ASSIGN_OR_RETURN(const HwlocTopology topology, NewHwlocTopology(source));
  const hwloc_topology_t raw = topology.get();
  // Only CPUs and caches matter. Skipping I/O devices, distances, memory
  // attributes and CPU kinds keeps host start-up in the milliseconds.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_MISC,
                                 HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_NO_DISTANCES |
                                    HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
                                    HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS);
  if (select(raw) != 0) return HwlocRejects(source);
  if (hwloc_topology_load(raw) != 0) {
    return SourceError(source, absl::StrCat("hwloc cannot load it (",
                                            std::strerror(errno), ")"));
  }
  if (const int pus = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU);
      limits != nullptr && !WithinLimits(static_cast<uint64_t>(pus), *limits)) {
    return TooManyCpus(source, static_cast<uint64_t>(pus), *limits);
  }
  return SpecFromHwloc(raw, source, limits);
}

absl::StatusOr<Topology> Discover(
    absl::string_view source, const TopologyLimits* limits,
    absl::FunctionRef<int(hwloc_topology_t)> select) {
  ASSIGN_OR_RETURN(TopologySpec spec, ReadSpec(source, limits, select));
  return Topology::Create(std::move(spec));
}

// ReadXmlSpecHere is hwloc's XML import in this process: what a reader
// process runs for LoadTopologyFromXml.
absl::StatusOr<TopologySpec> ReadXmlSpecHere(
    const xml_reader_wire::Request& request) {
  // hwloc wants a NUL-terminated buffer and an int length that counts the NUL.
  const int length = static_cast<int>(request.xml.size() + 1);
  return ReadSpec(request.name, &request.limits, [&](hwloc_topology_t raw) {
    return hwloc_topology_set_xmlbuffer(raw, request.xml.c_str(), length);
  });
}

// kXmlReader names the reader process service of LoadTopologyFromXml; one
// started for it answers before main().
constexpr absl::string_view kXmlReader = "topology-xml";

__attribute__((constructor)) void ServeXmlReaderProcess() {
  reader_process::ServeIfReaderProcess(kXmlReader, [](absl::string_view bytes) {
    absl::StatusOr<xml_reader_wire::Request> request =
        xml_reader_wire::DecodeRequest(bytes);
    return xml_reader_wire::EncodeAnswer(
        request.ok() ? ReadXmlSpecHere(*request) : request.status());
  });
}

}  // namespace

absl::StatusOr<Topology> LoadTopology(absl::string_view source,
                                      const TopologyLimits& limits) {
  if (source == kHostSource) {
    // No backend selected: hwloc discovers this machine natively.
    return Discover(source, /*limits=*/nullptr,
                    [](hwloc_topology_t) { return 0; });
  }
  if (absl::string_view description = source;
      absl::ConsumePrefix(&description, kSyntheticPrefix)) {
    RETURN_IF_ERROR(CheckSyntheticSource(source, limits));
    const std::string text(description);
    return Discover(source, &limits, [&](hwloc_topology_t topology) {
      return hwloc_topology_set_synthetic(topology, text.c_str());
    });
  }
  if (absl::StartsWith(source, kXmlPrefix)) {
    ASSIGN_OR_RETURN(std::string bytes, ReadTopologyXml(source));
    return LoadTopologyFromXml(bytes, source, limits);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "topology source \"", source,
      "\" is unknown: use host, synthetic:DESCRIPTION or xml:PATH"));
}

absl::Status CheckSyntheticSource(absl::string_view source,
                                  const TopologyLimits& limits) {
  absl::string_view description = source;
  if (!absl::ConsumePrefix(&description, kSyntheticPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology source \"", source, "\" is not synthetic:DESCRIPTION"));
  }
  ASSIGN_OR_RETURN(const SyntheticShape shape,
                   ReadSyntheticShape(source, description));
  if (!WithinLimits(shape.cpus, limits)) {
    return TooManyCpus(source, shape.cpus, limits);
  }
  RETURN_IF_ERROR(CheckSyntheticIndexes(source, description, limits));
  return CheckAttachedMemory(source, shape);
}

absl::StatusOr<std::string> ReadTopologyXml(absl::string_view source) {
  absl::string_view path_text = source;
  if (!absl::ConsumePrefix(&path_text, kXmlPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology source \"", source, "\" is not xml:PATH"));
  }
  const std::string path(path_text);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("topology ", source,
                                            ": cannot read ", path, " (",
                                            std::strerror(errno), ")"));
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) {
    return absl::NotFoundError(
        absl::StrCat("topology ", source, ": error reading ", path));
  }
  return std::move(bytes).str();
}

absl::StatusOr<Topology> LoadTopologyFromXml(absl::string_view xml_bytes,
                                             absl::string_view name,
                                             const TopologyLimits& limits) {
  if (xml_bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return SourceError(name, absl::StrCat("XML of ", xml_bytes.size(),
                                          " bytes is too large"));
  }
  if (const uint64_t pus = ExportedPuCount(xml_bytes);
      !WithinLimits(pus, limits)) {
    return TooManyCpus(name, pus, limits);
  }
  // hwloc 2.9 crashes on some XML (a NULL cpuset in
  // hwloc_insert_object_by_parent, one bit away from a real export), so it
  // reads the bytes in a reader process: a crash there is an error here.
  absl::StatusOr<std::string> answer = reader_process::Call(
      kXmlReader, xml_reader_wire::EncodeRequest(
          {std::string(name), limits, std::string(xml_bytes)}),
      limits.xml_read_time);
  if (absl::IsAborted(answer.status()) ||
      absl::IsDeadlineExceeded(answer.status())) {
    return SourceError(name, absl::StrCat("hwloc failed reading it: ",
                                          answer.status().message()));
  }
  if (!answer.ok()) {
    return absl::InternalError(
        absl::StrCat("topology ", name, ": ", answer.status().message()));
  }
  ASSIGN_OR_RETURN(TopologySpec spec, xml_reader_wire::DecodeAnswer(*answer));
  return Topology::Create(std::move(spec));
}

}  // namespace schedcache
