#include "trace/quoted_input.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace schedcache {

std::string QuoteInput(absl::string_view text) {
  if (text.size() <= kQuotedInputBytes) {
    return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kQuotedInputBytes)),
                      "...\" (", text.size(), " bytes)");
}

}  // namespace schedcache
