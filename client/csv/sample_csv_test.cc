#include "client/csv/sample_csv.h"

#include <sstream>
#include <string>
#include <variant>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(ParseSampleCsvRow, SampleWithEveryColumn) {
  absl::StatusOr<CsvEvent> event =
      ParseSampleCsvRow("1000,3,42,43,500,1,4,1,256,redis-server");
  ASSERT_TRUE(event.ok()) << event.status();
  const Sample& sample = std::get<Sample>(*event);
  EXPECT_EQ(sample.timestamp_ns, 1000);
  EXPECT_EQ(sample.cpu, 3);
  EXPECT_EQ(sample.tgid, 42);
  EXPECT_EQ(sample.tid, 43);
  EXPECT_EQ(sample.delta_ns, 500);
  EXPECT_TRUE(sample.tick);
  EXPECT_EQ(sample.nr_threads, 4);
  EXPECT_EQ(sample.numa_node, 1);
  EXPECT_EQ(sample.footprint_pages, 256);
  EXPECT_EQ(sample.comm.view(), "redis-server");
}

TEST(ParseSampleCsvRow, EmptyOptionalColumnsMeanUnchanged) {
  absl::StatusOr<CsvEvent> event = ParseSampleCsvRow("5,0,1,1,0,0,,,,");
  ASSERT_TRUE(event.ok()) << event.status();
  const Sample& sample = std::get<Sample>(*event);
  EXPECT_FALSE(sample.tick);
  EXPECT_EQ(sample.nr_threads, kUnchangedNrThreads);
  EXPECT_EQ(sample.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(sample.footprint_pages, kUnchangedFootprint);
  EXPECT_TRUE(sample.comm.empty());
}

TEST(ParseSampleCsvRow, NumaNodeMinusOneMeansNone) {
  absl::StatusOr<CsvEvent> event = ParseSampleCsvRow("5,0,1,1,10,0,,-1,,");
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(std::get<Sample>(*event).numa_node, -1);
}

TEST(ParseSampleCsvRow, EmptyDeltaIsHandOver) {
  absl::StatusOr<CsvEvent> event = ParseSampleCsvRow("7,2,0,0,,,,,,");
  ASSERT_TRUE(event.ok()) << event.status();
  const HandOver& handover = std::get<HandOver>(*event);
  EXPECT_EQ(handover.timestamp_ns, 7);
  EXPECT_EQ(handover.cpu, 2);
  EXPECT_EQ(handover.tgid, 0);
  EXPECT_EQ(handover.tid, 0);
}

TEST(ParseSampleCsvRow, CommKeepsCommasAndIsTruncatedAs16Bytes) {
  absl::StatusOr<CsvEvent> event =
      ParseSampleCsvRow("1,0,1,1,1,0,,,,a,b,c-very-long-name");
  ASSERT_TRUE(event.ok()) << event.status();
  // TASK_COMM_LEN is 16: 15 characters kept.
  EXPECT_EQ(std::get<Sample>(*event).comm.view(), "a,b,c-very-long");
}

TEST(ParseSampleCsvRow, BadValuesNameTheColumn) {
  EXPECT_NE(ParseSampleCsvRow("x,0,1,1,1,0,,,,").status().message().find(
                "timestamp_ns"),
            absl::string_view::npos);
  EXPECT_NE(ParseSampleCsvRow("1,0,1,1,1,maybe,,,,").status().message().find(
                "tick"),
            absl::string_view::npos);
  EXPECT_FALSE(ParseSampleCsvRow("1,0,1").ok());
}

TEST(SampleCsvReader, ReadsEventsAfterHeaderSkippingComments) {
  std::istringstream in(std::string(kSampleCsvHeader) +
                        "\n# a comment\n\n1,0,1,1,5,1,,,,\r\n2,0,0,0,,,,,,\n");
  SampleCsvReader reader(in);
  absl::StatusOr<std::optional<CsvEvent>> first = reader.Next();
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status();
  EXPECT_TRUE(std::holds_alternative<Sample>(**first));
  absl::StatusOr<std::optional<CsvEvent>> second = reader.Next();
  ASSERT_TRUE(second.ok() && second->has_value()) << second.status();
  EXPECT_TRUE(std::holds_alternative<HandOver>(**second));
  absl::StatusOr<std::optional<CsvEvent>> end = reader.Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST(SampleCsvReader, MissingHeaderIsAnError) {
  std::istringstream in("1,0,1,1,5,1,,,,\n");
  SampleCsvReader reader(in);
  absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.status().message().find("line 1"), absl::string_view::npos);
}

TEST(SampleCsvReader, BadRowNamesItsLine) {
  std::istringstream in(std::string(kSampleCsvHeader) + "\n1,0,1,1,5,1,,,,\nbad\n");
  SampleCsvReader reader(in);
  ASSERT_TRUE(reader.Next().ok());
  absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.status().message().find("line 3"), absl::string_view::npos);
}

TEST(SampleCsvReader, ReadingContinuesAfterABadRow) {
  std::istringstream in(std::string(kSampleCsvHeader) +
                        "\n1,x,1,1,5,1,,,,\n2,0,1,1,5,1,,,,\n");
  SampleCsvReader reader(in);
  EXPECT_FALSE(reader.header_seen());
  absl::StatusOr<std::optional<CsvEvent>> bad = reader.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(reader.header_seen());  // so the caller may skip the row
  EXPECT_EQ(bad.status().message(), "line 2: column cpu: \"x\" is not an integer");
  absl::StatusOr<std::optional<CsvEvent>> good = reader.Next();
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_TRUE(good->has_value());
  EXPECT_EQ(std::get<Sample>(**good).timestamp_ns, 2);
  EXPECT_EQ(reader.line(), 3);
}

TEST(SampleCsvReader, HeaderIsNotSeenAfterAWrongFirstLine) {
  std::istringstream in("not,a,header\n");
  SampleCsvReader reader(in);
  EXPECT_FALSE(reader.Next().ok());
  EXPECT_FALSE(reader.header_seen());
}

}  // namespace
}  // namespace schedcache
