#include "trace/cgroup_path.h"

namespace schedcache {
namespace {

// Plain says whether `c` stands for itself in the escaped form.
bool Plain(char c) { return c >= '!' && c <= '~' && c != '\\'; }

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

}  // namespace

std::string EscapeCgroupPath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    if (Plain(c)) {
      out.push_back(c);
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out.push_back('\\');
    out.push_back(static_cast<char>('0' + (byte >> 6)));
    out.push_back(static_cast<char>('0' + ((byte >> 3) & 7)));
    out.push_back(static_cast<char>('0' + (byte & 7)));
  }
  return out;
}

std::optional<std::string> UnescapeCgroupPath(std::string_view escaped) {
  if (escaped.empty()) return std::nullopt;
  std::string out;
  out.reserve(escaped.size());
  for (size_t i = 0; i < escaped.size(); ++i) {
    const char c = escaped[i];
    if (Plain(c)) {
      out.push_back(c);
      continue;
    }
    // A backslash and three octal digits, the first at most 3 (one byte).
    if (c != '\\' || i + 3 >= escaped.size() || escaped[i + 1] > '3' ||
        !IsOctal(escaped[i + 1]) || !IsOctal(escaped[i + 2]) ||
        !IsOctal(escaped[i + 3])) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(((escaped[i + 1] - '0') << 6) |
                                    ((escaped[i + 2] - '0') << 3) |
                                    (escaped[i + 3] - '0')));
    i += 3;
  }
  return out;
}

}  // namespace schedcache
