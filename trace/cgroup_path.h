// Cgroup paths in a capture's `# schedcache_cgroup: TGID PATH` lines
// (docs/LIVE.md, "Cgroup paths"): the path is one blank-free token, so that
// the line stays one line of valid ftrace text whatever bytes the path
// holds. Every byte outside '!'..'~', and the backslash, is written as a
// backslash and three octal digits, as /proc/self/mountinfo writes paths
// ("/a b" becomes "/a\040b"); every other byte is itself.
//
// Thread contract: pure functions.
#ifndef SCHEDCACHE_TRACE_CGROUP_PATH_H_
#define SCHEDCACHE_TRACE_CGROUP_PATH_H_

#include <optional>
#include <string>
#include <string_view>

namespace schedcache {

// EscapeCgroupPath returns `path` in the line's form.
std::string EscapeCgroupPath(std::string_view path);

// UnescapeCgroupPath returns the path `escaped` stands for; nullopt when it
// is empty, holds a byte EscapeCgroupPath escapes, or a backslash not
// followed by three octal digits of a byte (\000..\377).
std::optional<std::string> UnescapeCgroupPath(std::string_view escaped);

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_CGROUP_PATH_H_
