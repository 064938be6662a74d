// QuoteForMessage: how a value a client sent appears inside an error
// message. A name or a source may be megabytes long or hold control bytes;
// echoed whole, it would bloat every message that names it (and gRPC
// refuses a status message larger than its metadata limit), or garble a
// terminal. So at most kMaxQuotedBytes are shown, C-escaped, with the full
// length when cut.
//
// Thread contract: a pure function.
#ifndef SCHEDCACHE_COMMON_MESSAGE_TEXT_H_
#define SCHEDCACHE_COMMON_MESSAGE_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace schedcache {

inline constexpr size_t kMaxQuotedBytes = 80;

// QuoteForMessage returns "\"VALUE\"" for a short value, and
// "\"FIRST 80 BYTES...\" (N bytes)" for a longer one, C-escaped.
inline std::string QuoteForMessage(absl::string_view value) {
  if (value.size() <= kMaxQuotedBytes) {
    return absl::StrCat("\"", absl::CHexEscape(value), "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(value.substr(0, kMaxQuotedBytes)),
                      "...\" (", value.size(), " bytes)");
}

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_MESSAGE_TEXT_H_
