// FlagSet: the small per-verb flag parser of the `schedcache` CLI. absl flags
// are process-global, which suits one binary with one flag set, not a binary
// whose verbs each take different flags; a verb here declares its flags on
// its own FlagSet, bound to its own members, and Help() lists exactly those.
//
// Accepted forms: `--name VALUE`, `--name=VALUE`, `--switch`; `--` ends the
// flags. Everything else is positional.
//
// Thread contract: thread-compatible. The bound variables must outlive it.
#ifndef SCHEDCACHE_CLI_FLAG_SET_H_
#define SCHEDCACHE_CLI_FLAG_SET_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache::cli {

class FlagSet {
 public:
  // Each Add* binds `--name` to `*value`; the value's current content is the
  // default shown by Help(). `value_name` is the placeholder in help
  // ("SOURCE"). REQUIRES: `name` starts with "--" and is not yet defined.
  void AddString(absl::string_view name, absl::string_view value_name,
                 absl::string_view help, std::string* value);
  // AddChoice is AddString restricted to `choices`.
  void AddChoice(absl::string_view name, std::vector<std::string> choices,
                 absl::string_view help, std::string* value);
  void AddInt64(absl::string_view name, absl::string_view value_name,
                absl::string_view help, int64_t* value);
  // AddBool is a switch: its presence sets `*value` to true.
  void AddBool(absl::string_view name, absl::string_view help, bool* value);
  // AddRepeated appends the value of every occurrence (`--set A=1 --set B=2`).
  void AddRepeated(absl::string_view name, absl::string_view value_name,
                   absl::string_view help, std::vector<std::string>* values);

  // Parse assigns the flags in `args` and returns the positional arguments.
  // Returns InvalidArgument naming the flag for an unknown flag, a missing or
  // malformed value, or a value outside a choice list.
  absl::StatusOr<std::vector<std::string>> Parse(
      const std::vector<std::string>& args) const;

  // Help lists the flags, one per line, with their defaults.
  std::string Help() const;

 private:
  using Target = std::variant<std::string*, int64_t*, bool*,
                              std::vector<std::string>*>;
  struct Flag {
    std::string name;
    std::string value_name;  // empty for a switch
    std::string help;
    std::vector<std::string> choices;  // empty: any value
    Target target;
  };

  void Add(Flag flag);
  const Flag* Find(absl::string_view name) const;
  static absl::Status Assign(const Flag& flag, absl::string_view value);

  std::vector<Flag> flags_;
};

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_FLAG_SET_H_
