#include "trace/sample_csv.h"

#include <string>
#include <variant>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHeader(kSampleCsvHeader);

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

TEST(ParseSampleCsvRow, EmptyCpuTidAndDeltaIsAProcessExit) {
  // The columns after delta_ns do not matter, as for a hand-over.
  absl::StatusOr<CsvEvent> event = ParseSampleCsvRow("9,,4242,,,1,,,,srv");
  ASSERT_TRUE(event.ok()) << event.status();
  const ProcessExit& exit = std::get<ProcessExit>(*event);
  EXPECT_EQ(exit.timestamp_ns, 9);
  EXPECT_EQ(exit.tgid, 4242);
}

TEST(ParseSampleCsvRow, AProcessExitRowWithATidOrRuntimeIsRefused) {
  EXPECT_EQ(ParseSampleCsvRow("9,,4242,4243,,,,,,").status().message(),
            "column tid: \"4243\" is not empty, as a process-exit row (empty "
            "cpu) needs");
  EXPECT_EQ(ParseSampleCsvRow("9,,4242,,100,,,,,").status().message(),
            "column delta_ns: \"100\" is not empty, as a process-exit row "
            "(empty cpu) needs");
  EXPECT_EQ(ParseSampleCsvRow("9,,x,,,,,,,").status().message(),
            "column tgid: \"x\" is not an integer");
  EXPECT_EQ(ParseSampleCsvRow("y,,1,,,,,,,").status().message(),
            "column timestamp_ns: \"y\" is not an integer");
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
  const std::string text =
      kHeader + "\n# a comment\n\n1,0,1,1,5,1,,,,\r\n2,0,0,0,,,,,,\n";
  LineReader lines = LineReader::FromText(text, "test.csv");
  SampleCsvReader reader(lines);
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
  LineReader lines = LineReader::FromText("1,0,1,1,5,1,,,,\n", "test.csv");
  SampleCsvReader reader(lines);
  absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.status().message().find("line 1"), absl::string_view::npos);
}

TEST(SampleCsvReader, BadRowNamesItsLine) {
  const std::string text = kHeader + "\n1,0,1,1,5,1,,,,\nbad\n";
  LineReader lines = LineReader::FromText(text, "test.csv");
  SampleCsvReader reader(lines);
  ASSERT_TRUE(reader.Next().ok());
  absl::StatusOr<std::optional<CsvEvent>> event = reader.Next();
  ASSERT_FALSE(event.ok());
  EXPECT_NE(event.status().message().find("line 3"), absl::string_view::npos);
}

TEST(SampleCsvReader, ReadingContinuesAfterABadRow) {
  const std::string text = kHeader + "\n1,x,1,1,5,1,,,,\n2,0,1,1,5,1,,,,\n";
  LineReader lines = LineReader::FromText(text, "test.csv");
  SampleCsvReader reader(lines);
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
  LineReader lines = LineReader::FromText("not,a,header\n", "test.csv");
  SampleCsvReader reader(lines);
  EXPECT_FALSE(reader.Next().ok());
  EXPECT_FALSE(reader.header_seen());
}

TEST(ParseSampleCsvRow, ExtremeButRepresentableValuesParse) {
  // Reproducer rows of extreme inputs: every value fits its column, so the
  // parser accepts them and the engine rules on them (a negative delta is
  // the engine's "must not be negative").
  absl::StatusOr<CsvEvent> max_time =
      ParseSampleCsvRow("9223372036854775807,0,1,1,1000,1,,,,");
  ASSERT_TRUE(max_time.ok()) << max_time.status();
  EXPECT_EQ(std::get<Sample>(*max_time).timestamp_ns, INT64_MAX);
  absl::StatusOr<CsvEvent> min_delta =
      ParseSampleCsvRow("5,0,1,1,-9223372036854775808,1,,,,");
  ASSERT_TRUE(min_delta.ok()) << min_delta.status();
  EXPECT_EQ(std::get<Sample>(*min_delta).delta_ns, INT64_MIN);
}

TEST(ParseSampleCsvRow, NumbersOutOfTheirColumnsRangeSaySo) {
  EXPECT_EQ(ParseSampleCsvRow("9223372036854775808,0,1,1,1,0,,,,")
                .status()
                .message(),
            "column timestamp_ns: \"9223372036854775808\" is not an integer "
            "from -9223372036854775808 to 9223372036854775807");
  EXPECT_EQ(ParseSampleCsvRow("1,0,1,1,1,0,2147483648,,,").status().message(),
            "column nr_threads: \"2147483648\" is not an integer from "
            "-2147483648 to 2147483647");
  EXPECT_EQ(ParseSampleCsvRow("1,0,1,1,1e3,0,,,,").status().message(),
            "column delta_ns: \"1e3\" is not an integer");
}

TEST(ParseSampleCsvRow, ControlBytesOfABadFieldAreEscaped) {
  const absl::Status status =
      ParseSampleCsvRow("1,\x1b[2J\x01,1,1,1,0,,,,").status();
  EXPECT_EQ(status.message(),
            "column cpu: \"\\x1b[2J\\x01\" is not an integer");
}

TEST(SampleCsvReader, AWrongHeaderIsQuotedEscapedAndCut) {
  const std::string text = std::string(5000, 'a') + "\x01\n";
  LineReader lines = LineReader::FromText(text, "wrong.csv");
  SampleCsvReader reader(lines);
  const absl::Status status = reader.Next().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("line 1: expected the header"));
  EXPECT_THAT(status.message(), HasSubstr("...\" (5001 bytes)"));
  EXPECT_THAT(status.message(), Not(HasSubstr("\x01")));
  EXPECT_LT(status.message().size(), 400u) << status.message();
}

TEST(SampleCsvReader, ATenMegabyteHeaderIsReportedByItsLength) {
  const std::string text = std::string(10 * 1024 * 1024, 'a') + "\n";
  LineReader lines = LineReader::FromText(text, "huge.csv");
  SampleCsvReader reader(lines);
  const absl::Status status = reader.Next().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(status.message(), HasSubstr("'huge.csv' line 1 has at least"));
  EXPECT_LT(status.message().size(), 300u) << status.message();
  EXPECT_FALSE(reader.header_seen());
}

TEST(SampleCsvReader, TheCacheGroupHeaderReadsTheColumnBeforeComm) {
  const std::string text = std::string(kSampleCsvHeaderWithCacheGroup) +
                           "\n"
                           "1,0,1,1,5,1,,,,18446744073709551615,a,b\n"
                           "2,0,2,2,5,1,,,,,srv\n"
                           "3,0,0,0,,,,,,,\n"
                           "4,0,3,3,5,1,,,,-1,x\n";
  LineReader lines = LineReader::FromText(text, "groups.csv");
  SampleCsvReader reader(lines);
  absl::StatusOr<std::optional<CsvEvent>> named = reader.Next();
  ASSERT_TRUE(named.ok() && named->has_value()) << named.status();
  // Any uint64 names a group; comm is still the rest of the line.
  EXPECT_EQ(std::get<Sample>(**named).cache_group, UINT64_MAX);
  EXPECT_EQ(std::get<Sample>(**named).comm.view(), "a,b");
  absl::StatusOr<std::optional<CsvEvent>> own = reader.Next();
  ASSERT_TRUE(own.ok() && own->has_value()) << own.status();
  EXPECT_EQ(std::get<Sample>(**own).cache_group, kOwnCacheGroup);  // empty
  EXPECT_EQ(std::get<Sample>(**own).comm.view(), "srv");
  absl::StatusOr<std::optional<CsvEvent>> idle = reader.Next();
  ASSERT_TRUE(idle.ok() && idle->has_value()) << idle.status();
  EXPECT_TRUE(std::holds_alternative<HandOver>(**idle));
  EXPECT_EQ(reader.Next().status().message(),
            "line 5: column cache_group: \"-1\" is not an integer from 0 to "
            "18446744073709551615");
}

TEST(ParseSampleCsvRow, WithoutTheCacheGroupColumnEverySampleIsInItsOwnGroup) {
  absl::StatusOr<CsvEvent> event = ParseSampleCsvRow("1,0,1,1,5,1,,,,7");
  ASSERT_TRUE(event.ok()) << event.status();
  // The 7 is the comm here, not a group.
  EXPECT_EQ(std::get<Sample>(*event).cache_group, kOwnCacheGroup);
  EXPECT_EQ(std::get<Sample>(*event).comm.view(), "7");
  // A row one column short of the cache_group header says which it wanted.
  EXPECT_EQ(ParseSampleCsvRow("1,0,1,1,5,1,,,,x",
                              SampleCsvColumns::kWithCacheGroup)
                .status()
                .message(),
            "expected 11 columns (" +
                std::string(kSampleCsvHeaderWithCacheGroup) + "), found 10");
}

TEST(SampleCsvReader, EmptyAndCommentOnlyInputsHaveNoHeader) {
  LineReader empty = LineReader::FromText("", "empty.csv");
  EXPECT_EQ(SampleCsvReader(empty).Next().status().message(),
            "'empty.csv' has no header line \"" + kHeader +
                "\" (it is empty)");
  LineReader comments = LineReader::FromText("# only\n\n", "comments.csv");
  EXPECT_EQ(SampleCsvReader(comments).Next().status().message(),
            "'comments.csv' has no header line \"" + kHeader +
                "\" (only blank or # lines)");
}

}  // namespace
}  // namespace schedcache
