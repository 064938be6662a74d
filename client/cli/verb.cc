#include "client/cli/verb.h"

namespace schedcache::cli {

void CommonFlags::DefineServer(FlagSet& flags) {
  flags.AddString("--server", "ADDR",
                  "schedcached address, unix:PATH or HOST:PORT", &server);
}

void CommonFlags::DefineSession(FlagSet& flags) {
  flags.AddString("--session", "NAME", "session to use", &session);
}

void CommonFlags::DefineFormat(FlagSet& flags) {
  flags.AddChoice("--format", {"table", "json"},
                  "table for people, json for programs", &format);
}

}  // namespace schedcache::cli
