// RunCli: the `schedcache` command line, minus the process. main.cc passes
// argv here, so dispatch, help and usage errors are testable in-process.
//
// Thread contract: call from one thread at a time.
#ifndef SCHEDCACHE_CLI_CLI_H_
#define SCHEDCACHE_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace schedcache::cli {

// RunCli runs `schedcache ARGS...` (args excludes the program name) and
// returns the exit code: kExitOk, kExitError or kExitUsage (verb.h).
int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err);

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_CLI_H_
