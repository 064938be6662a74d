#include "topology/topology_source.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/testing/xml_samples.h"

namespace schedcache {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

const std::string kTopologyDir =
    std::string(SCHEDCACHE_SHARED_DATA_DIR) + "/topologies";

// ManifestRow is one line of MANIFEST.tsv: what hwloc's own tools say about
// a machine.
struct ManifestRow {
  std::string file;  // an XML file name, or "synthetic:DESCRIPTION"
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  int llc_level = 0;
  int llc_count = 0;
  int min_pus_per_llc = 0;
  int max_pus_per_llc = 0;
  std::vector<int64_t> llc_sizes;  // one value, or one per LLC in file order
};

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// ToInt gives -1 for text that is not a number, which then fails the
// comparison it feeds (the manifest is read before any test runs, so it
// cannot assert here).
int ToInt(absl::string_view text) {
  int value = -1;
  return absl::SimpleAtoi(text, &value) ? value : -1;
}

// ReadManifest parses MANIFEST.tsv. It returns no rows when the shared data
// folder is absent; the test below then skips.
std::vector<ManifestRow> ReadManifest() {
  std::vector<std::string> lines = ReadLines(kTopologyDir + "/MANIFEST.tsv");
  std::vector<ManifestRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {  // line 0 is the header
    std::vector<std::string> f = absl::StrSplit(lines[i], '\t');
    if (f.size() < 10) continue;
    ManifestRow row;
    row.file = f[0];
    row.packages = ToInt(f[2]);
    row.numa_nodes = ToInt(f[3]);
    row.cores = ToInt(f[4]);
    row.pus = ToInt(f[5]);
    row.llc_level = ToInt(absl::StripPrefix(f[6], "L"));
    row.llc_count = ToInt(f[7]);
    std::vector<std::string> range = absl::StrSplit(f[8], '-');
    row.min_pus_per_llc = ToInt(range.front());
    row.max_pus_per_llc = ToInt(range.back());
    for (absl::string_view size : absl::StrSplit(f[9], ',')) {
      int64_t bytes = -1;
      row.llc_sizes.push_back(absl::SimpleAtoi(size, &bytes) ? bytes : -1);
    }
    rows.push_back(row);
  }
  return rows;
}

// PrintTo names the machine in test output instead of dumping bytes.
void PrintTo(const ManifestRow& row, std::ostream* os) { *os << row.file; }

bool IsSynthetic(const ManifestRow& row) {
  return absl::StartsWith(row.file, "synthetic:");
}

std::string SourceOf(const ManifestRow& row) {
  return IsSynthetic(row) ? row.file : "xml:" + kTopologyDir + "/" + row.file;
}

// ReferenceFileOf names the LLC table hwloc-calc produced for the row:
// FILE.llc.txt, or synthetic-<description with ':' and ' ' as '-'>.llc.txt.
std::string ReferenceFileOf(const ManifestRow& row) {
  if (!IsSynthetic(row)) return kTopologyDir + "/" + row.file + ".llc.txt";
  return kTopologyDir + "/" +
         absl::StrReplaceAll(row.file, {{":", "-"}, {" ", "-"}}) + ".llc.txt";
}

// ReadReference returns the LLC CPU lists of a reference file, in its
// (hwloc logical) order. Lines read "INDEX<TAB>cpu,cpu,...".
std::vector<CpuSet> ReadReference(const std::string& path) {
  std::vector<CpuSet> llcs;
  for (const std::string& line : ReadLines(path)) {
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    EXPECT_EQ(f.size(), 2u) << path << ": " << line;
    CpuSet cpus;
    for (absl::string_view cpu : absl::StrSplit(f.back(), ',')) {
      cpus.Set(ToInt(cpu));
    }
    llcs.push_back(cpus);
  }
  return llcs;
}

class ReferenceMachineTest : public ::testing::TestWithParam<ManifestRow> {};

TEST_P(ReferenceMachineTest, MatchesHwlocReference) {
  const ManifestRow& row = GetParam();
  absl::StatusOr<Topology> topo = LoadTopology(SourceOf(row));
  ASSERT_TRUE(topo.ok()) << topo.status();

  EXPECT_EQ(topo->packages().size(), static_cast<size_t>(row.packages));
  EXPECT_EQ(topo->numa_nodes().size(), static_cast<size_t>(row.numa_nodes));
  EXPECT_EQ(topo->num_cores(), row.cores);
  EXPECT_EQ(topo->cpus().size(), static_cast<size_t>(row.pus));
  EXPECT_EQ(topo->online_cpus(), topo->all_cpus());
  ASSERT_EQ(topo->llcs().size(), static_cast<size_t>(row.llc_count));

  // The reference lists LLCs in hwloc logical order; ours are numbered by
  // lowest CPU. Match each reference LLC to ours by its lowest CPU, then the
  // whole CPU list, level and size must agree.
  const std::vector<CpuSet> reference = ReadReference(ReferenceFileOf(row));
  ASSERT_EQ(reference.size(), topo->llcs().size());
  ASSERT_TRUE(row.llc_sizes.size() == 1 ||
              row.llc_sizes.size() == reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    const int llc_id = topo->LlcOf(reference[i].First());
    ASSERT_GE(llc_id, 0) << "reference LLC " << i;
    const Llc& llc = topo->llcs()[llc_id];
    EXPECT_EQ(llc.cpus, reference[i])
        << "reference LLC " << i << ": ours " << llc.cpus.ToString()
        << ", hwloc " << reference[i].ToString();
    EXPECT_EQ(llc.level, row.llc_level);
    EXPECT_FALSE(llc.synthesized);
    const int64_t size =
        row.llc_sizes.size() == 1 ? row.llc_sizes[0] : row.llc_sizes[i];
    EXPECT_EQ(llc.size_bytes, size) << "reference LLC " << i;
    EXPECT_GE(llc.cpus.Count(), row.min_pus_per_llc);
    EXPECT_LE(llc.cpus.Count(), row.max_pus_per_llc);
  }
}

std::string CaseName(const ::testing::TestParamInfo<ManifestRow>& info) {
  std::string name;
  for (char c : info.param.file) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

// GTEST_ALLOW_UNINSTANTIATED: without ../shared/data there are no rows; the
// DataPresent test below reports the skip.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReferenceMachineTest);
INSTANTIATE_TEST_SUITE_P(Manifest, ReferenceMachineTest,
                         ::testing::ValuesIn(ReadManifest()), CaseName);

TEST(ReferenceMachines, ManifestIsPresent) {
  if (ReadManifest().empty()) {
    GTEST_SKIP() << kTopologyDir
                 << "/MANIFEST.tsv is absent: reference machines not tested";
  }
  SUCCEED();
}

TEST(LoadTopology, BuiltinEpycShapeHasTwoNodesOf12LlcsOf16Cpus) {
  absl::StatusOr<Topology> topo = LoadTopology(kEpyc9654Shape);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->source(), kEpyc9654Shape);
  EXPECT_EQ(topo->cpus().size(), 384u);
  ASSERT_EQ(topo->llcs().size(), 24u);
  for (const Llc& llc : topo->llcs()) {
    EXPECT_EQ(llc.cpus.Count(), 16);
    EXPECT_EQ(llc.level, 3);
  }
  EXPECT_EQ(topo->smt_threads(), 2);
  // NPS1: one NUMA node per package, 192 CPUs each, so NUMA balancing's scan
  // mask of one node is half the machine.
  ASSERT_EQ(topo->numa_nodes().size(), 2u);
  for (const CpuGroup& node : topo->numa_nodes()) {
    EXPECT_EQ(node.cpus.Count(), 192);
  }
  EXPECT_EQ(topo->MaxLlcsPerNode(), 12);
}

TEST(LoadTopology, HostHasCpusCoveredByLlcs) {
  absl::StatusOr<Topology> topo = LoadTopology(kHostSource);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->source(), "host");
  EXPECT_FALSE(topo->cpus().empty());
  EXPECT_TRUE(topo->online_cpus().IsSubsetOf(topo->all_cpus()));
  EXPECT_FALSE(topo->online_cpus().Empty());
  CpuSet covered;
  for (const Llc& llc : topo->llcs()) covered |= llc.cpus;
  EXPECT_EQ(covered, topo->all_cpus());
}

TEST(LoadTopology, PuWithoutCacheGetsSynthesizedLlc) {
  // No cache level in the description: every CPU is its own LLC.
  absl::StatusOr<Topology> topo = LoadTopology("synthetic:pack:1 core:2 pu:1");
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->llcs().size(), 2u);
  EXPECT_TRUE(topo->llcs()[0].synthesized);
  EXPECT_EQ(topo->llcs()[0].level, 0);
}

TEST(LoadTopology, L2IsTheLlcWithoutL3) {
  absl::StatusOr<Topology> topo =
      LoadTopology("synthetic:pack:1 l2:2 core:4 pu:1");
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->llcs().size(), 2u);
  EXPECT_EQ(topo->llcs()[0].level, 2);
  EXPECT_EQ(topo->llcs()[0].cpus, CpuSet::FromRange(0, 3));
}

TEST(LoadTopology, MissingXmlFileIsNotFound) {
  absl::StatusOr<Topology> topo = LoadTopology("xml:/nonexistent/t.xml");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(topo.status().message(), HasSubstr("/nonexistent/t.xml"));
}

TEST(LoadTopology, MalformedXmlFileIsInvalidArgument) {
  const std::string path = ::testing::TempDir() + "/malformed_topology.xml";
  std::ofstream(path) << "<?xml version=\"1.0\"?>\n<topology><object";
  absl::StatusOr<Topology> topo = LoadTopology("xml:" + path);
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr(path));
}

TEST(LoadTopology, NonsenseSyntheticIsInvalidArgument) {
  absl::StatusOr<Topology> topo = LoadTopology("synthetic:banana:7 pu:x");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("synthetic:banana:7 pu:x"));
}

TEST(LoadTopology, UnknownPrefixIsInvalidArgument) {
  absl::StatusOr<Topology> topo = LoadTopology("json:/tmp/t.json");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("json:/tmp/t.json"));
}

TEST(LoadTopologyFromXml, GarbageBytesAreInvalidArgument) {
  absl::StatusOr<Topology> topo =
      LoadTopologyFromXml(std::string("\x01\x02 not xml \xff", 13), "upload");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("upload"));
}

TEST(LoadTopologyFromXml, MalformedXmlThatCrashedHwlocsMinimalParser) {
  // A fuzz finding: hwloc's own minimal XML parser dereferenced NULL on this
  // (strspn in hwloc__nolibxml_import_next_attr). With the libxml2 backend
  // (libhwloc-plugins) it is an error like any other malformed XML.
  absl::StatusOr<Topology> topo =
      LoadTopologyFromXml("<topologyversion=\"2.0", "cut upload");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("cut upload"));
}

TEST(LoadTopologyFromXml, EmptyBytesAreInvalidArgument) {
  absl::StatusOr<Topology> topo = LoadTopologyFromXml("", "empty upload");
  EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(topo.status().message(), HasSubstr("empty upload"));
}

TEST(LoadTopologyFromXml, BytesOfRealExportLoad) {
  const std::string path = kTopologyDir + "/zhaoxin-zxd4600-1s.xml";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << path << " is absent";
  std::stringstream bytes;
  bytes << in.rdbuf();
  absl::StatusOr<Topology> topo = LoadTopologyFromXml(bytes.str(), "zhaoxin");
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->source(), "zhaoxin");
  // MANIFEST.tsv: 8 cores, no L3, two L2s of 4 cores.
  ASSERT_EQ(topo->llcs().size(), 2u);
  EXPECT_EQ(topo->llcs()[0].level, 2);
}

TopologyLimits LimitOf(int64_t max_cpus) {
  TopologyLimits limits;
  limits.max_cpus = max_cpus;
  return limits;
}

// A bound the limit tests can tell from the default, with a hint to raise it.
const TopologyLimits kLimitOf119{.max_cpus = 119,
                                 .how_to_raise = "flag --max_topology_cpus"};

TEST(TopologyLimits, SyntheticCountIsTheProductOfItsLevels) {
  // 2 packages x 3 L3s x 4 cores x 5 PUs = 120 CPUs; the NUMA node attached
  // to each package adds none, nor do the attributes in parentheses.
  constexpr char kSource[] =
      "synthetic:(memory=2GB) pack:2 [numa(memory=1GB)] l3:3(size=8MiB) "
      "core:4 pu:5";
  absl::StatusOr<Topology> refused = LoadTopology(kSource, kLimitOf119);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            absl::StrCat("topology ", kSource,
                         ": describes 120 CPUs, more than the limit of 119 "
                         "(flag --max_topology_cpus)"));
  absl::StatusOr<Topology> loaded =
      LoadTopology(kSource, LimitOf(120));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cpus().size(), 120u);
  EXPECT_EQ(loaded->numa_nodes().size(), 2u);
}

TEST(TopologyLimits, SyntheticBeyondTheLimitIsRefusedBeforeHwlocBuildsIt) {
  // hwloc needs about 20 s for one core of 12,000 PUs and grows faster than
  // linearly: a million would take hours. Only a refusal before hwloc runs
  // returns here, and only ours names the count.
  absl::StatusOr<Topology> refused =
      LoadTopology("synthetic:pack:1 l3:1 core:1 pu:1000000");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("describes 1000000 CPUs, more than the limit of "
                        "16384"));
}

TEST(TopologyLimits, SyntheticCountsSaturateInsteadOfWrapping) {
  // (2^32 - 1)^3 is about 2^96: a wrapped 64-bit product could come out
  // small; a saturated one stays above every limit.
  for (const char* source :
       {"synthetic:pack:4294967295 core:4294967295 pu:4294967295",
        "synthetic:pu:99999999999999999999999999999999"}) {
    absl::StatusOr<Topology> refused = LoadTopology(source);
    EXPECT_THAT(refused.status().message(),
                HasSubstr("describes at least 18446744073709551615 CPUs"))
        << source;
  }
}

TEST(TopologyLimits, UnreadableSyntheticNamesTheOffset) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pack:2 pu:0x10", "a level count that is not a decimal number at "
                         "offset 10"},
      {"pack:2 pu:-3", "a level count that is not a decimal number at "
                       "offset 10"},
      {"pack:0 pu:2", "a level of 0 objects at offset 5"},
      {"pack:2 [numa pu:2", "'[' without ']' at offset 7"},
      {"(memory=1GB pack:2", "'(' without ')' at offset 0"},
      {"pack:2(indexes=0,1 pu:2", "'(' without ')' at offset 6"},
      {"pack", "a level without \":COUNT\" at offset 0"},
  };
  for (const auto& [description, problem] : cases) {
    const std::string source = "synthetic:" + description;
    absl::StatusOr<Topology> refused = LoadTopology(source);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              absl::StrCat("topology ", source, ": ", problem, " of the "
                           "description"));
  }
}

// hwloc 2.9 leaks the attached memory items of a description it refuses
// after reading all its levels (fuzz findings "[numa:]" and
// "[num\xc6\x9e\xa2\xa4]"); such a description is refused before hwloc
// reads it whole, with hwloc's own words or, for the one check that reads
// the items, ours. LeakSanitizer (the sanitize stage) fails this test if one
// still reaches hwloc.
TEST(TopologyLimits, SyntheticMemoryItemsOfRefusedLevelsAreRefusedFirst) {
  for (const std::string description :
       {"[numa:]", "[num\xc6\x9e\xa2\xa4]", "pack:2 [numa] pu:2 pu:2",
        "pack:2 [numa] core:2", "pack:2 [numa] 2 pu:2"}) {
    const std::string source = "synthetic:" + description;
    absl::StatusOr<Topology> refused = LoadTopology(source);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              absl::StrCat("topology ", source,
                           ": hwloc rejects it (Invalid argument)"));
  }
  const std::string both = "synthetic:numa:2 [numa] pu:2";
  EXPECT_EQ(LoadTopology(both).status().message(),
            absl::StrCat("topology ", both,
                         ": NUMA nodes both as a level and attached "
                         "(\"[...]\")"));
  // Levels hwloc takes keep their attached NUMA node, one per package
  // (hwloc reads "[numa:]" as "[numa]").
  absl::StatusOr<Topology> taken =
      LoadTopology("synthetic:pack:2 [numa:] core:2 pu:2");
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->numa_nodes().size(), 2u);
  EXPECT_EQ(taken->cpus().size(), 8u);
}

// CoresXml is an hwloc 2 XML export of one package of `cores` cores of two
// PUs, the PU objects' type spelled `pu_type` (hwloc reads it without
// regard to case).
std::string CoresXml(int cores, absl::string_view pu_type) {
  const int all = (1 << (2 * cores)) - 1;
  std::string xml = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<topology version=\"2.0\">\n"
      "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x%x\" "
      "complete_cpuset=\"0x%x\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
      "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x%x\" "
      "complete_cpuset=\"0x%x\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n",
      all, all, all, all);
  for (int core = 0; core < cores; ++core) {
    absl::StrAppendFormat(&xml,
                          "<object type=\"Core\" os_index=\"%d\" "
                          "cpuset=\"0x%x\" complete_cpuset=\"0x%x\">\n",
                          core, 3 << (2 * core), 3 << (2 * core));
    for (int pu = 2 * core; pu < 2 * core + 2; ++pu) {
      absl::StrAppendFormat(&xml,
                            "<object type=\"%s\" os_index=\"%d\" "
                            "cpuset=\"0x%x\" complete_cpuset=\"0x%x\"/>\n",
                            pu_type, pu, 1 << pu, 1 << pu);
    }
    xml += "</object>\n";
  }
  return xml + "</object>\n</topology>\n";
}

TEST(TopologyLimits, SyntheticIndexesAreAListOfBoundedOsIndexes) {
  // A list of os indexes is hwloc's own numbering: PUs 3, 2, 1, 0.
  absl::StatusOr<Topology> listed =
      LoadTopology("synthetic:pack:2 pu:2(indexes=3,2,1,0)", kLimitOf119);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->all_cpus().ToString(), "0-3");
  const std::vector<std::pair<std::string, std::string>> cases = {
      // A fuzz finding: hwloc 2.9 asserts (aborts) on this interleaving.
      {"(indexes=pu71*4)pack#core:9 pu:2",
       "indexes= at offset 1 must be a list of decimal os indexes"},
      {"pack:2 pu:2(indexes=0,,1)", "must be a list of decimal os indexes"},
      // hwloc sized every bitmap by it: 6.8 GB for one index of 2^31.
      {"pack:2 pu:2(indexes=0,1,2,2000000000)",
       "os index 2000000000 at offset 12 is not below 476"},
  };
  for (const auto& [description, problem] : cases) {
    absl::StatusOr<Topology> topo =
        LoadTopology(absl::StrCat("synthetic:", description), kLimitOf119);
    EXPECT_EQ(topo.status().code(), absl::StatusCode::kInvalidArgument)
        << description;
    EXPECT_THAT(topo.status().message(), HasSubstr(problem)) << description;
  }
}

TEST(TopologyLimits, XmlWithinTheLimitLoads) {
  absl::StatusOr<Topology> loaded = LoadTopologyFromXml(
      CoresXml(3, "PU"), "six.xml", LimitOf(6));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cpus().size(), 6u);
}

TEST(TopologyLimits, XmlExportBeyondTheLimitIsRefusedBeforeHwlocReadsIt) {
  // Not XML at all, yet refused for its count: hwloc never saw it (it would
  // have said it cannot read it).
  const std::string bytes = "junk type=\"PU\" type=\"PU\" type=\"PU\"";
  absl::StatusOr<Topology> refused = LoadTopologyFromXml(
      bytes, "junk.xml", LimitOf(2));
  EXPECT_EQ(refused.status().message(),
            "topology junk.xml: describes 3 CPUs, more than the limit of 2");
}

TEST(TopologyLimits, XmlSpellingPusOtherwiseIsCountedOnceRead) {
  // `type="pu"` escapes the count of exported PUs; hwloc reads 6 PUs.
  absl::StatusOr<Topology> refused = LoadTopologyFromXml(
      CoresXml(3, "pu"), "six.xml", LimitOf(5));
  EXPECT_EQ(refused.status().message(),
            "topology six.xml: describes 6 CPUs, more than the limit of 5");
}

TEST(TopologyLimits, XmlFileIsBoundedLikeBytes) {
  const std::string path = ::testing::TempDir() + "/six_cpus.xml";
  std::ofstream(path) << CoresXml(3, "PU");
  absl::StatusOr<Topology> refused =
      LoadTopology("xml:" + path, LimitOf(5));
  EXPECT_THAT(refused.status().message(),
              HasSubstr("describes 6 CPUs, more than the limit of 5"));
}

TEST(LoadTopologyFromXml, XmlThatCrashesHwlocIsInvalidArgumentAndNothingMore) {
  absl::StatusOr<Topology> crashed =
      LoadTopologyFromXml(kXmlThatCrashesHwloc, "no-complete.xml");
  EXPECT_EQ(crashed.status().code(), absl::StatusCode::kInvalidArgument);
  // Under ASan the reader process reports the SEGV and exits with status 1.
  EXPECT_THAT(crashed.status().message(),
              AnyOf(HasSubstr("topology no-complete.xml: hwloc failed reading "
                              "it: the reader process was killed by signal "
                              "11 (Segmentation fault)"),
                    HasSubstr("topology no-complete.xml: hwloc failed reading "
                              "it: the reader process exited with status 1")));
  // This process lives on and reads the next XML.
  absl::StatusOr<Topology> next =
      LoadTopologyFromXml(CoresXml(2, "PU"), "four.xml");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->cpus().size(), 4u);
}

TEST(TopologyLimits, XmlCpuOsIndexIsBelowFourTimesTheLimit) {
  // Six CPUs (the limit) but one numbered 30: bitmaps are sized by the
  // largest index, and 30 >= 4 * 6.
  std::string xml = CoresXml(3, "PU");
  xml = absl::StrReplaceAll(xml, {{"\"0x3f\"", "\"0x4000001f\""},
                                  {"\"0x30\"", "\"0x40000010\""},
                                  {"\"0x20\"", "\"0x40000000\""},
                                  {"os_index=\"5\"", "os_index=\"30\""}});
  absl::StatusOr<Topology> refused =
      LoadTopologyFromXml(xml, "sparse.xml", LimitOf(6));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "topology sparse.xml: CPU os index 30 is not below 24 (4 times "
            "the CPU limit)");
  // Within the bound of a limit of 8 (32), the same XML loads.
  EXPECT_TRUE(LoadTopologyFromXml(xml, "sparse.xml", LimitOf(8)).ok());
}

TEST(TopologyLimits, HostIsNeverBounded) {
  absl::StatusOr<Topology> host =
      LoadTopology(kHostSource, LimitOf(0));
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_FALSE(host->cpus().empty());
}

}  // namespace
}  // namespace schedcache
