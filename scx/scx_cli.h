// RunScxCli is the command line of schedcache-scx (scx_main.cc): flags, the
// scheduler's life until SIGINT or SIGTERM, --stats, and the final JSON
// summary (docs/INTEGRATION.md, "schedcache-scx"). In a library so tests
// run it in-process with the checks' inputs pointed elsewhere.
#ifndef SCHEDCACHE_SCX_SCX_CLI_H_
#define SCHEDCACHE_SCX_SCX_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "scx/scx_loader.h"

namespace schedcache {

// kScxDefaultPinRoot: --pin-dir's default is this plus the session name,
// as `schedcache mirror`'s.
inline constexpr char kScxDefaultPinRoot[] = "/sys/fs/bpf/schedcache/";

// RunScxCli runs schedcache-scx with `args` (argv without the program
// name); `base` gives what the flags do not (the sched_ext directory, the
// euid). Returns 0 after a clean stop, 1 when a check refuses or the
// scheduler fails, 2 for a bad flag.
int RunScxCli(const std::vector<std::string>& args, const ScxOptions& base,
              std::ostream& out, std::ostream& err);

}  // namespace schedcache

#endif  // SCHEDCACHE_SCX_SCX_CLI_H_
