// InvokeCli: runs `schedcache ARGS...` in-process through RunCli and keeps
// what it wrote, for the CLI's tests.
#ifndef SCHEDCACHE_CLIENT_CLI_TESTING_CLI_CAPTURE_H_
#define SCHEDCACHE_CLIENT_CLI_TESTING_CLI_CAPTURE_H_

#include <sstream>
#include <string>
#include <vector>

#include "client/cli/cli.h"

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

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLIENT_CLI_TESTING_CLI_CAPTURE_H_
