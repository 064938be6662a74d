#include "trace/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/line_reader_test_" + name;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Gzip returns `text` compressed with zlib's gzip writer, by way of a file
// of its own: ctest runs the test cases of this binary in parallel.
std::string Gzip(const std::string& text) {
  const std::string path =
      TempPath(std::string(::testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name()) +
               ".gzip.tmp");
  gzFile out = gzopen(path.c_str(), "wb");
  EXPECT_NE(out, nullptr);
  EXPECT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(out);
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Zstd returns `text` as one Zstandard frame, as `zstd` writes it.
std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t size =
      ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(size));
  out.resize(size);
  return out;
}

// ReadAll reads every line, stopping at the first error (returned).
absl::Status ReadAll(LineReader& reader, std::vector<std::string>& lines) {
  while (true) {
    absl::StatusOr<std::optional<std::string_view>> line = reader.NextLine();
    if (!line.ok()) return line.status();
    if (!line->has_value()) return absl::OkStatus();
    lines.emplace_back(**line);
  }
}

// NumberedLines is "line 1\n" ... "line n\n": distinct lines, so a cut file
// shows how far it got.
std::string NumberedLines(int n) {
  std::string text;
  for (int i = 1; i <= n; ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

TEST(LineReader, PlainGzipAndTextGiveTheSameLines) {
  const std::string text = "first\n\nthird\r\nlast without newline";
  const std::string plain = TempPath("plain.txt");
  const std::string gz = TempPath("plain.txt.also");  // the name says nothing
  WriteFile(plain, text);
  WriteFile(gz, Gzip(text));
  const std::vector<std::string> want = {"first", "", "third\r",
                                         "last without newline"};
  std::vector<LineReader> readers;
  readers.push_back(*LineReader::Open(plain));
  readers.push_back(*LineReader::Open(gz));
  readers.push_back(LineReader::FromText(text, "text"));
  for (LineReader& reader : readers) {
    std::vector<std::string> lines;
    ASSERT_TRUE(ReadAll(reader, lines).ok());
    EXPECT_EQ(lines, want) << reader.path();
    EXPECT_EQ(reader.line_number(), 4);
  }
}

// ExpectCutIsDataLoss writes the first half of `compressed`, the
// compressed form of NumberedLines(200000) (a few hundred KiB), to `path`
// and reads it: roughly half of the lines come back intact, then the
// stream just stops, which must be DataLoss naming the line it stopped in
// and containing each of `message_parts`, and stay so.
void ExpectCutIsDataLoss(const std::string& compressed,
                         const std::string& path,
                         const std::vector<std::string>& message_parts) {
  WriteFile(path, compressed.substr(0, compressed.size() / 2));
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> lines;
  const absl::Status status = ReadAll(*reader, lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  for (const std::string& part : message_parts) {
    EXPECT_THAT(status.message(), HasSubstr(part));
  }
  EXPECT_THAT(status.message(),
              HasSubstr("(in line " + std::to_string(lines.size() + 1) + ")"));
  ASSERT_GT(lines.size(), 1000u);
  EXPECT_LT(lines.size(), 200000u);
  // Every line before the cut is intact.
  EXPECT_EQ(lines[999], "line 1000");
  // The error stays: nothing after it reads as a clean end.
  EXPECT_EQ(reader->NextLine().status(), status);
}

TEST(LineReader, TruncatedGzipIsDataLossNamingTheFileAndHowFarItGot) {
  const std::string path = TempPath("cut.gz");
  ExpectCutIsDataLoss(Gzip(NumberedLines(200000)), path, {path, "truncated"});
}

TEST(LineReader, GzipWithGarbageAfterItsHeaderIsDataLoss) {
  std::string bytes = Gzip(NumberedLines(100));
  for (size_t i = 10; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xa5);
  const std::string path = TempPath("garbage.gz");
  WriteFile(path, bytes);
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> lines;
  const absl::Status status = ReadAll(*reader, lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("corrupt gzip data in '" + path + "' after "));
  EXPECT_THAT(status.message(), Not(HasSubstr("<fd:")));
}

TEST(LineReader, ZstdReadsAsItsTextWhateverTheName) {
  const std::string text = "first\n\nthird\r\nlast without newline";
  const std::string path = TempPath("zstd.also");
  WriteFile(path, Zstd(text));
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> lines;
  ASSERT_TRUE(ReadAll(*reader, lines).ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"first", "", "third\r",
                                             "last without newline"}));
}

TEST(LineReader, ConcatenatedZstdFramesReadAsOneText) {
  // `cat a.zst b.zst` decompresses to a's text then b's, as `zstd -d` says;
  // the line cut across the two frames is one line.
  const std::string path = TempPath("two-frames.zst");
  WriteFile(path, Zstd("line 1\nline ") + Zstd("2\nline 3\n"));
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> lines;
  ASSERT_TRUE(ReadAll(*reader, lines).ok());
  EXPECT_EQ(lines,
            (std::vector<std::string>{"line 1", "line 2", "line 3"}));
}

TEST(LineReader, TruncatedZstdIsDataLossNamingTheFileAndHowFarItGot) {
  // As the gzip case: the input stops inside the frame.
  const std::string path = TempPath("cut.zst");
  ExpectCutIsDataLoss(Zstd(NumberedLines(200000)), path,
                      {"'" + path + "' is truncated: its zstd stream ends "
                                    "inside a frame, after "});
}

TEST(LineReader, ZstdWithGarbageAfterItsMagicIsDataLoss) {
  std::string bytes = Zstd(NumberedLines(100));
  for (size_t i = 4; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xa5);
  const std::string path = TempPath("garbage.zst");
  WriteFile(path, bytes);
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> lines;
  const absl::Status status = ReadAll(*reader, lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("'" + path + "' holds corrupt zstd data ("));
  EXPECT_TRUE(lines.empty());
}

TEST(LineReader, ShortAndMagicLikePlainFilesReadAsText) {
  // Sniffing reads the first 4 bytes: a file shorter than that, and one
  // that starts with only part of the zstd magic, are plain text.
  for (const std::string& text :
       {std::string("ab"), std::string("\x28\xb5/x\ny")}) {
    const std::string path = TempPath("short");
    WriteFile(path, text);
    absl::StatusOr<LineReader> reader = LineReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<std::string> lines;
    ASSERT_TRUE(ReadAll(*reader, lines).ok());
    std::vector<std::string> want;
    LineReader expected = LineReader::FromText(text, "text");
    ASSERT_TRUE(ReadAll(expected, want).ok());
    EXPECT_EQ(lines, want);
    EXPECT_FALSE(lines.empty());
  }
}

TEST(LineReader, EmptyFilesHaveNoLines) {
  const std::string plain = TempPath("empty");
  const std::string gz = TempPath("empty.gz");
  WriteFile(plain, "");
  WriteFile(gz, Gzip(""));
  for (const std::string& path : {plain, gz}) {
    absl::StatusOr<LineReader> reader = LineReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    absl::StatusOr<std::optional<std::string_view>> line = reader->NextLine();
    ASSERT_TRUE(line.ok()) << line.status();
    EXPECT_FALSE(line->has_value()) << path;
  }
}

TEST(LineReader, ALineOverTheLimitIsOutOfRangeWithItsNumberAndLength) {
  // Line 2 has kMaxLineBytes + 1 = 1048577 bytes; line 1 is fine, and a line
  // of exactly the limit would be too.
  const std::string text = std::string(LineReader::kMaxLineBytes, 'a') + "\n" +
                           std::string(LineReader::kMaxLineBytes + 1, 'b') +
                           "\nc\n";
  LineReader reader = LineReader::FromText(text, "long.txt");
  std::vector<std::string> lines;
  const absl::Status status = ReadAll(reader, lines);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_THAT(status.message(),
              HasSubstr("'long.txt' line 2 has 1048577 bytes"));
  EXPECT_THAT(status.message(), HasSubstr("limit of 1048576 bytes"));
}

TEST(LineReader, DevZeroStopsAtTheLineLimitAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<LineReader> reader = LineReader::Open("/dev/zero");
  ASSERT_TRUE(reader.ok()) << reader.status();
  const absl::Status status = reader->NextLine().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  // The reader stops after a chunk past the limit, never later.
  EXPECT_THAT(status.message(), HasSubstr("'/dev/zero' line 1 has at least "));
  EXPECT_THAT(status.message(), HasSubstr("bytes without a newline"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(LineReader, ADirectoryIsRefusedWhenOpened) {
  absl::StatusOr<LineReader> reader = LineReader::Open(::testing::TempDir());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(reader.status().message(), HasSubstr("is a directory"));
}

TEST(LineReader, MissingFileIsNotFoundNamingIt) {
  absl::StatusOr<LineReader> reader = LineReader::Open("/nonexistent/trace");
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr("/nonexistent/trace"));
}

TEST(LineReader, AFifoWithoutAWriterReadsAsEmptyInsteadOfHanging) {
  const std::string fifo = TempPath("fifo-no-writer");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::StatusOr<LineReader> reader = LineReader::Open(fifo);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<std::optional<std::string_view>> line = reader->NextLine();
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_FALSE(line->has_value());
  unlink(fifo.c_str());
}

TEST(LineReader, AFifoWithAWriterIsRead) {
  const std::string fifo = TempPath("fifo-writer");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // O_RDWR opens without waiting (Linux) and holds the FIFO's write end.
  const int writer = open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(write(writer, "one\ntwo\n", 8), 8);
  absl::StatusOr<LineReader> reader = LineReader::Open(fifo);
  ASSERT_TRUE(reader.ok()) << reader.status();
  close(writer);  // the data stays in the pipe: the reader holds it open
  std::vector<std::string> lines;
  ASSERT_TRUE(ReadAll(*reader, lines).ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
  unlink(fifo.c_str());
}

}  // namespace
}  // namespace schedcache
