// QuoteInput: how an error message shows text it read from a user's file (a
// malformed line, a bad CSV field, a wrong header). The text may be huge or
// hold terminal control bytes, so it is cut and escaped before it reaches a
// terminal or a log.
//
// Thread contract: a pure function.
#ifndef SCHEDCACHE_TRACE_QUOTED_INPUT_H_
#define SCHEDCACHE_TRACE_QUOTED_INPUT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace schedcache {

// kQuotedInputBytes is how many bytes of the input a message quotes.
inline constexpr size_t kQuotedInputBytes = 200;

// QuoteInput returns `text` in double quotes with every byte that is not
// printable ASCII escaped C-style (\x01, \n, \", \\), e.g. "a\x01b". Text
// longer than kQuotedInputBytes is cut there and marked with its length:
// "aaaa..."... (10485760 bytes).
std::string QuoteInput(absl::string_view text);

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_QUOTED_INPUT_H_
