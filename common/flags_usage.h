// SetFlagsUsage gives an Abseil-flags binary a truthful --help: the usage
// message, and the flags of its own main file. Abseil's default lists only
// flags defined in a file named after the binary, which none of ours is, so
// without this --help prints "No flags matched".
#ifndef SCHEDCACHE_COMMON_FLAGS_USAGE_H_
#define SCHEDCACHE_COMMON_FLAGS_USAGE_H_

#include <string>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace schedcache {

// `main_file` is the path suffix of the file defining the flags, e.g.
// "server/main.cc". Call once, before absl::ParseCommandLine.
inline void SetFlagsUsage(absl::string_view usage, absl::string_view main_file) {
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [file = std::string(main_file)](
                                   absl::string_view path) {
    return absl::EndsWith(path, file);
  };
  absl::SetFlagsUsageConfig(config);
}

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_FLAGS_USAGE_H_
