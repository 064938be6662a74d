#include "collector/cgroup_paths.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collector/internal/proc_file.h"

namespace schedcache::host {
namespace {

// Line is one `ID:CONTROLLERS:PATH` line of a cgroup file.
struct Line {
  absl::string_view controllers;
  absl::string_view path;  // may hold ':'
};

std::optional<Line> SplitLine(absl::string_view text) {
  const size_t first = text.find(':');
  if (first == absl::string_view::npos) return std::nullopt;
  const size_t second = text.find(':', first + 1);
  if (second == absl::string_view::npos) return std::nullopt;
  return Line{text.substr(first + 1, second - first - 1),
              text.substr(second + 1)};
}

bool HasCpuController(absl::string_view controllers) {
  for (const absl::string_view name : absl::StrSplit(controllers, ',')) {
    if (name == "cpu") return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> ParseCgroupFile(absl::string_view text,
                                            absl::string_view source) {
  // The kernel refuses '\n' in a cgroup's name, so each line is one cgroup.
  std::optional<absl::string_view> cpu, unified;
  for (const absl::string_view text_line :
       absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::optional<Line> line = SplitLine(text_line);
    if (!line) continue;
    if (HasCpuController(line->controllers)) {
      cpu = text_line;
    } else if (absl::StartsWith(text_line, "0::")) {
      unified = text_line;
    }
  }
  const std::optional<absl::string_view> chosen = cpu ? cpu : unified;
  if (!chosen) {
    return absl::NotFoundError(absl::StrCat(
        source, " has neither a cpu controller line nor a cgroup v2 (0::) "
                "line"));
  }
  const absl::string_view path = SplitLine(*chosen)->path;
  if (!absl::StartsWith(path, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": line \"", *chosen, "\" has no path (want /...)"));
  }
  return std::string(path);
}

CgroupPaths::CgroupPaths(std::string proc_root)
    : proc_root_(std::move(proc_root)) {}

absl::StatusOr<std::string> CgroupPaths::Read(int32_t tgid) const {
  const std::string path = absl::StrCat(proc_root_, "/", tgid, "/cgroup");
  absl::StatusOr<std::string> text = internal::ReadProcFile(path);
  if (!text.ok()) return text.status();
  return ParseCgroupFile(*text, path);
}

}  // namespace schedcache::host
