// The `schedcache` command-line client. All logic is in cli.cc.
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return schedcache::cli::RunCli(args, std::cout, std::cerr);
}
