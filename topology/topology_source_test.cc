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
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

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

TEST(LoadTopology, BuiltinEpycShapeHas24LlcsOf16Cpus) {
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

}  // namespace
}  // namespace schedcache
