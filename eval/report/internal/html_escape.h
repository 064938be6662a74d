// HtmlEscape makes text safe inside HTML and SVG element content and quoted
// attribute values.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_HTML_ESCAPE_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_HTML_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace schedcache::report_internal {

inline std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_HTML_ESCAPE_H_
