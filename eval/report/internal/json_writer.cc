#include "eval/report/internal/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstddef>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace schedcache::report_internal {
namespace {

// Utf8SequenceLength returns the length of the well-formed UTF-8 sequence
// at the start of `text` (RFC 3629: no overlongs, no surrogates, nothing
// above U+10FFFF), or 0 when the first byte does not start one.
size_t Utf8SequenceLength(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // range of the second byte
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      text.remove_prefix(1);
    } else {
      out.append(text.data(), length);
      text.remove_prefix(length);
    }
  }
  return out;
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const unsigned char ch = static_cast<unsigned char>(text[0]);
    size_t length = 1;
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (ch < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", ch);
        } else if ((length = Utf8SequenceLength(text)) == 0) {
          out += "\\ufffd";
          length = 1;
        } else {
          out.append(text.data(), length);
        }
    }
    text.remove_prefix(length);
  }
  out += '"';
  return out;
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  // The shortest round-trip form of any double fits in 24 characters
  // ("-2.2250738585072014e-308"), so to_chars cannot run out of room.
  char buffer[32];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, r.ptr);
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_elements_.empty()) {
    if (has_elements_.back()) out_ += ',';
    has_elements_.back() = true;
  }
}

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_ += bracket;
  has_elements_.push_back(false);
}

void JsonWriter::Close(char bracket) {
  // Abseil 20220623 has no CHECK; the raw one is its invariant check.
  ABSL_RAW_CHECK(!has_elements_.empty() && !after_key_, "unbalanced JSON container");
  has_elements_.pop_back();
  out_ += bracket;
}

void JsonWriter::BeginObject() { Open('{'); }
void JsonWriter::EndObject() { Close('}'); }
void JsonWriter::BeginArray() { Open('['); }
void JsonWriter::EndArray() { Close(']'); }

void JsonWriter::Key(absl::string_view key) {
  BeforeValue();
  absl::StrAppend(&out_, JsonQuote(key), ":");
  after_key_ = true;
}

void JsonWriter::String(absl::string_view value) {
  BeforeValue();
  out_ += JsonQuote(value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  out_ += JsonNumber(value);
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void WriteDistribution(JsonWriter& json, const Distribution& d) {
  json.BeginObject();
  json.Key("count");
  json.Uint(d.count);
  json.Key("mean");
  json.Double(d.mean);
  json.Key("p50");
  json.Int(d.p50);
  json.Key("p99");
  json.Int(d.p99);
  json.Key("max");
  json.Int(d.max);
  json.EndObject();
}

}  // namespace schedcache::report_internal
