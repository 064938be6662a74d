// For the CLI's tests: InvokeCli runs `schedcache ARGS...` in-process
// through RunCli and keeps what it printed; ReadWrittenFile reads back a
// file it wrote.
#ifndef SCHEDCACHE_CLI_TESTING_CLI_CAPTURE_H_
#define SCHEDCACHE_CLI_TESTING_CLI_CAPTURE_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace schedcache::cli {

// CliResult is one run: its exit code and everything it printed.
struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult InvokeCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

// ReadWrittenFile returns the whole of `path`, or "" when it cannot be read.
inline std::string ReadWrittenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_TESTING_CLI_CAPTURE_H_
