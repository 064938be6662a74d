#include "cli/cli.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_format.h"
#include "cli/verb.h"

namespace schedcache::cli {
namespace {

const VerbEntry* FindVerb(absl::string_view name) {
  for (const VerbEntry& entry : Verbs()) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

void PrintOverview(std::ostream& out) {
  out << "usage: schedcache VERB [flags]\n\nverbs:\n";
  for (const VerbEntry& entry : Verbs()) {
    out << absl::StrFormat("  %-12s %s\n", entry.name,
                           entry.make()->summary());
  }
  out << "\nRun 'schedcache VERB --help' for the flags of a verb.\n";
}

void PrintVerbHelp(const VerbEntry& entry, Verb& verb, const FlagSet& flags,
                   std::ostream& out) {
  out << "usage: schedcache " << entry.name << " [flags]";
  if (!verb.positional_usage().empty()) out << " " << verb.positional_usage();
  out << "\n\n" << verb.summary() << "\n";
  const std::string flag_help = flags.Help();
  out << "\nflags:\n" << (flag_help.empty() ? "  (none)\n" : flag_help);
}

// WantsHelp tells whether --help or -h comes before any "--".
bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

int UsageError(absl::string_view verb, absl::string_view message,
               std::ostream& err) {
  err << "schedcache " << verb << ": " << message
      << "\nRun 'schedcache " << verb << " --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err) {
  if (args.empty()) {
    PrintOverview(err);
    return kExitUsage;
  }
  const std::string& name = args[0];
  if (name == "help" || name == "--help" || name == "-h") {
    if (args.size() > 1) return RunCli({args[1], "--help"}, out, err);
    PrintOverview(out);
    return kExitOk;
  }
  const VerbEntry* entry = FindVerb(name);
  if (entry == nullptr) {
    err << "schedcache: unknown verb \"" << name
        << "\"\nRun 'schedcache help' for the list of verbs.\n";
    return kExitUsage;
  }
  std::unique_ptr<Verb> verb = entry->make();
  FlagSet flags;
  verb->DefineFlags(flags);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (WantsHelp(rest)) {
    PrintVerbHelp(*entry, *verb, flags, out);
    return kExitOk;
  }
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(rest);
  if (!positional.ok()) {
    return UsageError(name, positional.status().message(), err);
  }
  if (verb->positional_usage().empty() && !positional->empty()) {
    return UsageError(name,
                      "unexpected argument \"" + positional->front() + "\"",
                      err);
  }
  return verb->Run(*positional, out, err);
}

}  // namespace schedcache::cli
