// End-to-end tests of `schedcache ab` and `schedcache feed` on inputs that
// must never crash, hang or mislead (docs/SERVICE.md): truncated gzip files,
// /dev/zero, a directory, a FIFO without a writer, a 10 MB header, rows the
// session refuses, values at the int64 limits. Each runs the built binary
// and checks its exit code, its message and how long it took.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kSchedcache =
    std::string(SCHEDCACHE_BINARY_DIR) + "/bin/schedcache";
const std::string kHeader =
    "timestamp_ns,cpu,tgid,tid,delta_ns,tick,nr_threads,numa_node,"
    "footprint_pages,comm\n";

// Gzip writes `text` gzip'd to `path`.
void Gzip(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(out);
}

// CutInHalf truncates the file at `path` to half its size.
void CutInHalf(const std::string& path) {
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
}

// Trace is `n` runs of thread 5 on CPU 0, each 5 ms of every 10 ms.
std::string Trace(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    const std::string t = std::to_string(10 + i / 100) + "." +
                          std::to_string(100 + i % 100).substr(1);
    text += "  <idle>-0 [000] d..2. " + t +
            "0000: sched_switch: prev_comm=s "
            "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w "
            "next_pid=5 next_prio=120\n";
    text += "  w-5 [000] d..2. " + t +
            "5000: sched_switch: prev_comm=w "
            "prev_pid=5 prev_prio=120 prev_state=S ==> next_comm=s "
            "next_pid=0 next_prio=120\n";
  }
  return text;
}

// Timed is a command's result and how long it ran.
struct Timed {
  CommandResult result;
  absl::Duration took;
};

Timed RunSchedcache(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kSchedcache};
  argv.insert(argv.end(), args.begin(), args.end());
  const absl::Time start = absl::Now();
  CommandResult result = RunCommand(argv);
  return Timed{std::move(result), absl::Now() - start};
}

Timed Ab(const std::string& input) {
  return RunSchedcache(
      {"ab", "--input", input, "--topology", std::string(kTwoLlcTopology)});
}

class InputE2eTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const {
    return dir_.path() + "/" + name;
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }

  TempDir dir_;
};

TEST_F(InputE2eTest, AbOnATruncatedGzipTraceIsDataLossNamingTheFile) {
  const std::string path = Path("half.trace.gz");
  Gzip(path, Trace(20000));
  CutInHalf(path);
  const Timed ab = Ab("trace:" + path);
  EXPECT_EQ(ab.result.exit_code, 1) << ab.result.out;
  EXPECT_THAT(ab.result.err, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(ab.result.err, HasSubstr("'" + path + "' is truncated"));
  EXPECT_THAT(ab.result.err, HasSubstr("bytes of text (in line "));
  EXPECT_EQ(ab.result.out, "");  // no table of half the samples
}

TEST_F(InputE2eTest, DevZeroADirectoryAndAFifoFailClearlyWithinASecond) {
  const std::string fifo = Path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  struct Case {
    std::string input;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"csv:/dev/zero", "'/dev/zero' line 1 has at least "},
      {"trace:/dev/zero", "'/dev/zero' line 1 has at least "},
      {"csv:" + dir_.path(), "'" + dir_.path() + "' is a directory"},
      {"trace:" + dir_.path(), "'" + dir_.path() + "' is a directory"},
      {"csv:" + fifo, "'" + fifo + "' has no header line"},
      {"trace:" + fifo, "trace '" + fifo + "' is empty"},
  };
  for (const Case& c : cases) {
    const Timed ab = Ab(c.input);
    EXPECT_EQ(ab.result.exit_code, 1) << c.input;
    EXPECT_THAT(ab.result.err, HasSubstr(c.message)) << c.input;
    EXPECT_LT(ab.took, absl::Seconds(1)) << c.input;
  }
}

TEST_F(InputE2eTest, ATenMegabyteHeaderIsReportedByItsLengthNotEchoed) {
  const std::string path =
      Write("huge-header.csv", std::string(10 * 1024 * 1024, 'a') + "\n");
  const Timed ab = Ab("csv:" + path);
  EXPECT_EQ(ab.result.exit_code, 1);
  EXPECT_THAT(ab.result.err, HasSubstr("line 1 has at least "));
  EXPECT_THAT(ab.result.err, HasSubstr("over the line limit of 1048576"));
  EXPECT_LT(ab.result.err.size(), 400u) << ab.result.err;
}

TEST_F(InputE2eTest, AbRejectsANrThreadsZeroRowOnItsOwnAndExitsZero) {
  // Line 3 is refused; lines 2 and 4 are applied.
  const std::string path =
      Write("one-bad-row.csv", kHeader +
                                   "4000000,0,10,10,3000000,1,2,,,app\n"
                                   "6000000,1,10,11,5,1,0,,,app\n"
                                   "8000000,1,10,11,3000000,1,2,,,app\n");
  const Timed ab = Ab("csv:" + path);
  EXPECT_EQ(ab.result.exit_code, 0) << ab.result.err;
  EXPECT_THAT(ab.result.out,
              HasSubstr("2 samples, 0 hand-overs, 1 malformed lines"));
  EXPECT_THAT(ab.result.out,
              HasSubstr("malformed: line 3: nr_threads 0 must be >= 1\n"));
}

TEST_F(InputE2eTest, AbQuotesControlBytesOfABadRowEscaped) {
  const std::string path =
      Write("control.csv", kHeader + "1000,\x1b[2J,10,10,5,1,,,,app\n" +
                               "2000,0,10,10,5,1,,,,app\n");
  const Timed ab = Ab("csv:" + path);
  EXPECT_EQ(ab.result.exit_code, 0) << ab.result.err;
  EXPECT_THAT(ab.result.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(ab.result.out,
              HasSubstr("malformed: line 2: column cpu: \"\\x1b[2J\" is not "
                        "an integer\n"));
}

// FeedTest runs `schedcache feed` against an in-process server.
class FeedTest : public InputE2eTest {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_TRUE(
        server_->client->CreateSession(TwoLlcSessionRequest("in")).ok());
  }

  Timed Feed(const std::string& path) {
    return RunSchedcache({"feed", "--session", "in",
                          "--server=" + server_->server->addresses()[0], path});
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(FeedTest, ATruncatedGzipCsvIsDataLossSayingWhatWasSent) {
  std::string text = kHeader;
  for (int i = 1; i <= 100000; ++i) {
    text += std::to_string(i * 1000) + ",0,10,10,1000,1,,,,app\n";
  }
  const std::string path = Path("half.csv.gz");
  Gzip(path, text);
  CutInHalf(path);
  const Timed feed = Feed(path);
  EXPECT_EQ(feed.result.exit_code, 1) << feed.result.out;
  EXPECT_THAT(feed.result.err, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(feed.result.err, HasSubstr("'" + path + "' is truncated"));
  EXPECT_THAT(feed.result.err, HasSubstr("events before it were sent"));
}

TEST_F(FeedTest, DevZeroAndADirectoryFailClearlyWithinASecond) {
  for (const std::string& path : {std::string("/dev/zero"), dir_.path()}) {
    const Timed feed = Feed(path);
    EXPECT_EQ(feed.result.exit_code, 1) << path;
    EXPECT_THAT(feed.result.err, HasSubstr("'" + path + "'"));
    EXPECT_LT(feed.took, absl::Seconds(1)) << path;
  }
}

TEST_F(FeedTest, ValuesAtTheInt64LimitsGivePerRowResults) {
  // The reproducer rows. Line 2 is an ordinary sample; whether the
  // server takes one at INT64_MAX (line 3) is the engine's rule; line 4 is
  // refused either way (a negative delta). Each row is counted once and the
  // server answers, so the rest of the stream still counts.
  const std::string path =
      Write("limits.csv", kHeader +
                              "0,0,1,1,1000,1,,,,\n"
                              "9223372036854775807,0,1,1,1000,1,,,,\n"
                              "5,0,1,1,-9223372036854775808,1,,,,\n");
  const Timed feed = Feed(path);
  ASSERT_EQ(feed.result.exit_code, 0) << feed.result.err;
  int accepted = -1, rejected = -1;
  ASSERT_EQ(std::sscanf(feed.result.out.c_str(), "accepted %d, rejected %d",
                        &accepted, &rejected),
            2)
      << feed.result.out;
  EXPECT_GE(accepted, 1);
  EXPECT_EQ(accepted + rejected, 3);
  EXPECT_THAT(feed.result.out, HasSubstr("\n  line 4: "));
  EXPECT_TRUE(server_->client->GetReport("in").ok());
}

}  // namespace
}  // namespace schedcache::test_support
