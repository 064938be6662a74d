// Helpers for the report tests: run a command and capture its output, read
// and write whole files in the test's temporary directory.
#ifndef SCHEDCACHE_EVAL_REPORT_INTERNAL_TEST_UTIL_H_
#define SCHEDCACHE_EVAL_REPORT_INTERNAL_TEST_UTIL_H_

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace schedcache::report_internal {

// RunCommand runs `command` through the shell and returns its standard
// output, or Internal with the exit status when it fails.
inline absl::StatusOr<std::string> RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("popen: ", command));
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0) {
    return absl::InternalError(
        absl::StrCat("`", command, "` exited with ", status, ": ", output));
  }
  return output;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace schedcache::report_internal

#endif  // SCHEDCACHE_EVAL_REPORT_INTERNAL_TEST_UTIL_H_
