// Verb: one sub-command of the `schedcache` CLI (`schedcache topology`,
// `schedcache demo`, ...). A verb is one file: a class implementing Verb and
// a Make function listed once in verb_table.cc. main.cc does the rest:
// dispatch, `--help` built from the verb's own FlagSet, usage errors.
//
// Thread contract: a verb runs once, on the main thread.
#ifndef SCHEDCACHE_CLI_VERB_H_
#define SCHEDCACHE_CLI_VERB_H_

#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/flag_set.h"
#include "common/service_defaults.h"

namespace schedcache::cli {

// Exit codes of the CLI, as docs/SERVICE.md fixes them.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // the operation failed
inline constexpr int kExitUsage = 2;  // unknown verb or flag, bad value

// kDefaultServer is the address --server takes when it is not given. Built
// from pointer and length: g++ 12 with -fsanitize=undefined does not treat
// the null check of string_view(const char*) as a constant expression.
inline constexpr absl::string_view kDefaultServer(
    kDefaultServerAddress, sizeof(kDefaultServerAddress) - 1);

// CommonFlags are the flags docs/SERVICE.md gives every verb that needs them. A
// verb defines only the ones it uses, so its --help stays truthful.
struct CommonFlags {
  std::string server = std::string(kDefaultServer);
  std::string session = kDefaultSessionName;
  std::string format = "table";
  // PEM files of --tls-ca, --tls-cert, --tls-key, and --tls-server-name:
  // any of them given, the channel uses TLS.
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;

  // DefineServer defines --server and the TLS flags (DefineTls).
  void DefineServer(FlagSet& flags);
  // DefineTls defines the TLS flags alone, for a verb with its own --server.
  void DefineTls(FlagSet& flags);
  void DefineSession(FlagSet& flags);
  void DefineFormat(FlagSet& flags);
  bool json() const { return format == "json"; }
};

class Verb {
 public:
  virtual ~Verb() = default;

  // summary is one line for `schedcache help`.
  virtual absl::string_view summary() const = 0;
  // positional_usage names the positional arguments for the usage line
  // ("FILE|-"); empty means the verb takes none and main rejects any.
  virtual absl::string_view positional_usage() const { return ""; }
  // DefineFlags binds the verb's flags to its members.
  virtual void DefineFlags(FlagSet& flags) = 0;
  // Run does the work once the flags are parsed and returns an exit code.
  // Results go to `out`, diagnostics to `err`.
  virtual int Run(const std::vector<std::string>& positional,
                  std::ostream& out, std::ostream& err) = 0;
};

// VerbEntry is one row of the dispatch table.
struct VerbEntry {
  absl::string_view name;
  std::unique_ptr<Verb> (*make)();
};

// Verbs returns the dispatch table (verb_table.cc), in the order
// `schedcache help` lists it.
std::span<const VerbEntry> Verbs();

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_VERB_H_
