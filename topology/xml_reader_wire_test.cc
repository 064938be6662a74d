#include "topology/xml_reader_wire.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::xml_reader_wire {
namespace {

using ::testing::HasSubstr;

TopologySpec TwoLlcSpec() {
  TopologySpec spec;
  spec.source = "two.xml";
  spec.cpus = {{0, 0, 0, 0}, {1, 0, 0, 0}, {8, 1, 1, 1}, {9, 1, 1, -1}};
  spec.llcs = {{3, 32 << 20, CpuSet{0, 1}}, {2, 0, CpuSet{8, 9}}};
  spec.online = CpuSet{0, 8, 9};
  return spec;
}

void ExpectSameSpec(const TopologySpec& got, const TopologySpec& want) {
  EXPECT_EQ(got.source, want.source);
  ASSERT_EQ(got.cpus.size(), want.cpus.size());
  for (size_t i = 0; i < got.cpus.size(); ++i) {
    EXPECT_EQ(got.cpus[i].os_index, want.cpus[i].os_index) << i;
    EXPECT_EQ(got.cpus[i].core, want.cpus[i].core) << i;
    EXPECT_EQ(got.cpus[i].package, want.cpus[i].package) << i;
    EXPECT_EQ(got.cpus[i].numa_node, want.cpus[i].numa_node) << i;
  }
  ASSERT_EQ(got.llcs.size(), want.llcs.size());
  for (size_t i = 0; i < got.llcs.size(); ++i) {
    EXPECT_EQ(got.llcs[i].level, want.llcs[i].level) << i;
    EXPECT_EQ(got.llcs[i].size_bytes, want.llcs[i].size_bytes) << i;
    EXPECT_EQ(got.llcs[i].cpus, want.llcs[i].cpus) << i;
  }
  EXPECT_EQ(got.online, want.online);
}

TEST(XmlReaderWire, SpecRoundTrips) {
  absl::StatusOr<TopologySpec> decoded =
      DecodeAnswer(EncodeAnswer(TwoLlcSpec()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ExpectSameSpec(*decoded, TwoLlcSpec());
}

TEST(XmlReaderWire, ErrorRoundTripsWithItsCodeAndMessage) {
  const absl::Status error =
      absl::InvalidArgumentError("topology x.xml: hwloc cannot load it");
  EXPECT_EQ(DecodeAnswer(EncodeAnswer(error)).status(), error);
}

TEST(XmlReaderWire, EveryCutOfAnAnswerIsMalformed) {
  const std::string answer = EncodeAnswer(TwoLlcSpec());
  for (size_t size = 0; size < answer.size(); ++size) {
    absl::StatusOr<TopologySpec> cut = DecodeAnswer(answer.substr(0, size));
    ASSERT_EQ(cut.status().code(), absl::StatusCode::kInternal) << size;
    EXPECT_THAT(cut.status().message(), HasSubstr("is malformed at byte"));
  }
}

TEST(XmlReaderWire, ACountBeyondTheBytesIsMalformedNotAnAllocation) {
  // Kind 1 (a spec), an empty source, then 2^60 CPUs in 8 bytes.
  std::string answer(8, '\0');
  answer[0] = 1;
  answer += std::string(8, '\0');
  answer += std::string(7, '\0') + '\x10';
  absl::StatusOr<TopologySpec> decoded = DecodeAnswer(answer);
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(decoded.status().message(), HasSubstr("malformed at byte 16"));
}

TEST(XmlReaderWire, TrailingBytesAreMalformed) {
  EXPECT_EQ(DecodeAnswer(EncodeAnswer(TwoLlcSpec()) + "x").status().code(),
            absl::StatusCode::kInternal);
}

TEST(XmlReaderWire, RequestRoundTrips) {
  const Request request{"up.xml",
                        {6, "flag --max_topology_cpus"},
                        std::string("<topology\0/>", 12)};
  absl::StatusOr<Request> decoded = DecodeRequest(EncodeRequest(request));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->name, request.name);
  EXPECT_EQ(decoded->limits.max_cpus, 6);
  EXPECT_EQ(decoded->limits.how_to_raise, request.limits.how_to_raise);
  EXPECT_EQ(decoded->xml, request.xml);
}

TEST(XmlReaderWire, AGarbledRequestIsInvalidArgument) {
  absl::StatusOr<Request> decoded = DecodeRequest("short");
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(),
              HasSubstr("request of 5 bytes is malformed at byte 0"));
}

}  // namespace
}  // namespace schedcache::xml_reader_wire
