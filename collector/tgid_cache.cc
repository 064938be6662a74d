#include "collector/tgid_cache.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "collector/internal/proc_file.h"

namespace schedcache::host {

TgidCache::TgidCache(std::string proc_root)
    : proc_root_(std::move(proc_root)) {}

absl::StatusOr<int> TgidCache::Tgid(int tid) {
  if (tid == 0) return 0;
  if (const auto it = tgid_by_tid_.find(tid); it != tgid_by_tid_.end()) {
    return it->second;
  }
  ASSIGN_OR_RETURN(const int tgid, ReadTgid(tid));
  tgid_by_tid_.emplace(tid, tgid);
  return tgid;
}

void TgidCache::Forget(int tid) { tgid_by_tid_.erase(tid); }

absl::StatusOr<int> TgidCache::ReadTgid(int tid) const {
  const std::string path = absl::StrCat(proc_root_, "/", tid, "/status");
  absl::StatusOr<std::string> text = internal::ReadProcFile(path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat("thread ", tid, " is gone (", text.status().message(),
                     ")"));
  }
  if (!text.ok()) return text.status();
  return ParseTgidFromStatus(*text, path);
}

absl::StatusOr<int> ParseTgidFromStatus(absl::string_view status_text,
                                        absl::string_view source) {
  for (absl::string_view line : absl::StrSplit(status_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Tgid:")) continue;
    const absl::string_view value = absl::StripAsciiWhitespace(line);
    int tgid = 0;
    if (!absl::SimpleAtoi(value, &tgid) || tgid <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": Tgid is not a positive integer: \"", value, "\""));
    }
    return tgid;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": no \"Tgid:\" line"));
}

}  // namespace schedcache::host
