// schedcache-scx: schedcache's sched_ext scheduler on the pinned maps of
// `schedcache mirror`. All logic is in scx_cli.cc.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "scx/scx_cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  schedcache::ScxOptions base;
  base.euid = geteuid();
  return schedcache::RunScxCli(args, base, std::cout, std::cerr);
}
