#include "trace/quoted_input.h"

#include <string>

#include "gtest/gtest.h"

namespace schedcache {
namespace {

TEST(QuoteInput, ShortPrintableTextIsOnlyQuoted) {
  EXPECT_EQ(QuoteInput("bash-1234 [001]"), "\"bash-1234 [001]\"");
  EXPECT_EQ(QuoteInput(""), "\"\"");
}

TEST(QuoteInput, ControlBytesQuotesAndBackslashesAreEscaped) {
  // ESC would start a terminal sequence; 0x01 and DEL are unprintable. A
  // hex digit right after a \x escape is escaped too ('b' is \x62), so the
  // escape cannot swallow it.
  EXPECT_EQ(QuoteInput(std::string("a\x01"
                                   "b\x1b[2J\x7f",
                                   8)),
            "\"a\\x01\\x62\\x1b[2J\\x7f\"");
  EXPECT_EQ(QuoteInput("tab\there\r\n"), "\"tab\\there\\r\\n\"");
  EXPECT_EQ(QuoteInput("say \"hi\" \\o/"), "\"say \\\"hi\\\" \\\\o/\"");
  EXPECT_EQ(QuoteInput(std::string("\0", 1)), "\"\\x00\"");
}

TEST(QuoteInput, LongTextIsCutAndNamesItsLength) {
  const std::string header(10 * 1024 * 1024, 'a');
  const std::string quoted = QuoteInput(header);
  // 200 a's between the quote and the "...", then the full length.
  EXPECT_EQ(quoted, "\"" + std::string(kQuotedInputBytes, 'a') +
                        "...\" (10485760 bytes)");
  EXPECT_EQ(QuoteInput(std::string(kQuotedInputBytes, 'b')),
            "\"" + std::string(kQuotedInputBytes, 'b') + "\"");
}

}  // namespace
}  // namespace schedcache
