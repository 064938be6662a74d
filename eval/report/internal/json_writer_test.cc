#include "eval/report/internal/json_writer.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace schedcache::report_internal {
namespace {

TEST(JsonQuote, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonQuote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonQuote("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f\0", 3)), R"("\u0001\u001f\u0000")");
}

TEST(JsonQuote, PassesValidUtf8AndDelThrough) {
  // "é" is C3 A9, "€" E2 82 AC, "𝄞" F0 9D 84 9E; DEL needs no escape.
  EXPECT_EQ(JsonQuote("\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\x7F"),
            "\"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\x7F\"");
}

TEST(JsonQuote, ReplacesInvalidUtf8WithReplacementCharacter) {
  // A lone continuation byte, an overlong "/" (C0 AF), a truncated 3-byte
  // sequence at the end, and a UTF-16 surrogate (ED A0 80).
  EXPECT_EQ(JsonQuote("a\x80" "b\xC0\xAF" "c\xE2\x82"),
            R"("a\ufffdb\ufffd\ufffdc\ufffd\ufffd")");
  EXPECT_EQ(JsonQuote("\xED\xA0\x80"), R"("\ufffd\ufffd\ufffd")");
}

// ValidUtf8 replaces the bytes JsonQuote replaces, one U+FFFD (EF BF BD)
// each, and keeps every valid sequence and control character as it is.
TEST(ValidUtf8, ReplacesEachInvalidByteAndKeepsTheRest) {
  EXPECT_EQ(ValidUtf8("\xC3\xA9\xF0\x9D\x84\x9E\t\x01"),
            "\xC3\xA9\xF0\x9D\x84\x9E\t\x01");
  EXPECT_EQ(ValidUtf8("a\x80" "b\xC0\xAF" "c\xE2\x82"),
            "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonNumber, PrintsShortestRoundTripForm) {
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(3.0), "3");
  EXPECT_EQ(JsonNumber(-2.5), "-2.5");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(std::strtod(JsonNumber(third).c_str(), nullptr), third);
  EXPECT_EQ(std::strtod(JsonNumber(1e300).c_str(), nullptr), 1e300);
}

TEST(JsonNumber, PrintsNullForNanAndInfinity) {
  EXPECT_EQ(JsonNumber(std::nan("")), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonWriter, SeparatesMembersAndElementsWithCommas) {
  JsonWriter json;
  json.BeginObject();
  json.Key("a");
  json.Int(-1);
  json.Key("b");
  json.BeginArray();
  json.Uint(2);
  json.Null();
  json.BeginObject();
  json.EndObject();
  json.BeginArray();
  json.EndArray();
  json.EndArray();
  json.Key("c");
  json.Double(0.5);
  json.Key("d");
  json.String("x");
  json.EndObject();
  EXPECT_EQ(json.text(), R"({"a":-1,"b":[2,null,{},[]],"c":0.5,"d":"x"})");
}

}  // namespace
}  // namespace schedcache::report_internal
