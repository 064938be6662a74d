// JsonWriter builds one JSON document into a string: objects, arrays,
// strings (escaped, with invalid UTF-8 replaced by U+FFFD so the output is
// always valid JSON text), integers and doubles (shortest round-trip form;
// NaN and infinities, which JSON cannot hold, become null).
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_JSON_WRITER_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "policies/decision.h"

namespace schedcache::report_internal {

// ValidUtf8 returns `text` with each byte that starts no well-formed UTF-8
// sequence replaced by U+FFFD, as JsonQuote writes it: protobuf's JSON
// mapping needs valid UTF-8, and a trace's comm or a malformed input line
// need not be.
std::string ValidUtf8(absl::string_view text);

// JsonQuote returns `text` as a JSON string literal, quotes included.
std::string JsonQuote(absl::string_view text);

// JsonNumber returns `value` in the shortest form that parses back to the
// same double, or "null" when it is not finite.
std::string JsonNumber(double value);

class JsonWriter {
 public:
  // Containers. REQUIRES: Begin/End calls nest properly; inside an object
  // every value is preceded by Key().
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(absl::string_view key);

  void String(absl::string_view value);
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Double(double value);
  void Null();

  // text returns the document so far; complete once every container closed.
  const std::string& text() const { return out_; }

 private:
  // BeforeValue writes the comma that separates this value from the
  // previous one in the same container, unless a key has just been written.
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);

  std::string out_;
  std::vector<bool> has_elements_;  // one per open container
  bool after_key_ = false;
};

// WriteDistribution writes `d` as {count, mean, p50, p99, max}, the shape
// every report's JSON gives a distribution.
void WriteDistribution(JsonWriter& json, const Distribution& d);

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_JSON_WRITER_H_
