#include "trace/cgroup_path.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/ftrace_writer.h"
#include "trace/trace_line.h"

namespace schedcache {
namespace {

using ::testing::Optional;

TEST(CgroupPath, EscapesBlanksNewlinesBackslashesAndHighBytes) {
  // ' ' is 040, '\n' 012, '\\' 134, 0xff 377; the rest is itself.
  EXPECT_EQ(EscapeCgroupPath("/a b\n\\:\xff~"), "/a\\040b\\012\\134:\\377~");
  EXPECT_EQ(EscapeCgroupPath("/system.slice/x.service"),
            "/system.slice/x.service");
}

TEST(CgroupPath, EveryByteRoundTrips) {
  std::string all = "/";
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  EXPECT_THAT(UnescapeCgroupPath(EscapeCgroupPath(all)), Optional(all));
}

TEST(CgroupPath, RefusesBadEscapesRawBlanksAndEmpty) {
  EXPECT_EQ(UnescapeCgroupPath(""), std::nullopt);
  EXPECT_EQ(UnescapeCgroupPath("/a b"), std::nullopt);
  EXPECT_EQ(UnescapeCgroupPath("/a\\04"), std::nullopt);   // too short
  EXPECT_EQ(UnescapeCgroupPath("/a\\089"), std::nullopt);  // not octal
  EXPECT_EQ(UnescapeCgroupPath("/a\\400"), std::nullopt);  // over a byte
  EXPECT_EQ(UnescapeCgroupPath("/a\\"), std::nullopt);
}

TEST(CgroupLine, WrittenLineParsesBackToItsProcessAndPath) {
  const std::string line = FormatCgroupLine(4242, "/jobs/a b");
  EXPECT_EQ(line, "# schedcache_cgroup: 4242 /jobs/a\\040b\n");
  // The parse views into its text: keep the text.
  const std::string text = line.substr(0, line.size() - 1);
  const TraceLine parsed = ParseTraceLine(text);
  ASSERT_EQ(parsed.kind, TraceLine::Kind::kCgroup) << parsed.error;
  EXPECT_EQ(parsed.pid, 4242);
  EXPECT_THAT(UnescapeCgroupPath(parsed.cgroup_path), Optional(std::string(
                                                          "/jobs/a b")));
}

TEST(CgroupLine, MalformedLinesSayWhatIsWrong) {
  for (const char* text :
       {"# schedcache_cgroup:", "# schedcache_cgroup: 12",
        "# schedcache_cgroup: x /a", "# schedcache_cgroup: 0 /a",
        "# schedcache_cgroup: 12 /a b"}) {
    const TraceLine parsed = ParseTraceLine(text);
    EXPECT_EQ(parsed.kind, TraceLine::Kind::kMalformed) << text;
    EXPECT_THAT(std::string(parsed.error),
                ::testing::HasSubstr("schedcache_cgroup"))
        << text;
  }
  // Another comment stays a comment.
  EXPECT_EQ(ParseTraceLine("# schedcache_cgroups are fun").kind,
            TraceLine::Kind::kNotScheduler);
}

}  // namespace
}  // namespace schedcache
