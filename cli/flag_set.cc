#include "cli/flag_set.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace schedcache::cli {

void FlagSet::AddString(absl::string_view name, absl::string_view value_name,
                        absl::string_view help, std::string* value) {
  Add(Flag{std::string(name), std::string(value_name), std::string(help), {},
           value});
}

void FlagSet::AddChoice(absl::string_view name,
                        std::vector<std::string> choices,
                        absl::string_view help, std::string* value) {
  Add(Flag{std::string(name), absl::StrJoin(choices, "|"), std::string(help),
           std::move(choices), value});
}

void FlagSet::AddInt64(absl::string_view name, absl::string_view value_name,
                       absl::string_view help, int64_t* value) {
  Add(Flag{std::string(name), std::string(value_name), std::string(help), {},
           value});
}

void FlagSet::AddBool(absl::string_view name, absl::string_view help,
                      bool* value) {
  Add(Flag{std::string(name), "", std::string(help), {}, value});
}

void FlagSet::AddRepeated(absl::string_view name, absl::string_view value_name,
                          absl::string_view help,
                          std::vector<std::string>* values) {
  Add(Flag{std::string(name), std::string(value_name), std::string(help), {},
           values});
}

void FlagSet::Add(Flag flag) {
  // Both are programming errors in a verb, never user input (Abseil
  // 20220623 has no CHECK, hence the explicit abort).
  if (!absl::StartsWith(flag.name, "--") || Find(flag.name) != nullptr) {
    std::fprintf(stderr, "FlagSet: bad or repeated flag name %s\n",
                 flag.name.c_str());
    std::abort();
  }
  flags_.push_back(std::move(flag));
}

const FlagSet::Flag* FlagSet::Find(absl::string_view name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status FlagSet::Assign(const Flag& flag, absl::string_view value) {
  if (!flag.choices.empty() &&
      std::find(flag.choices.begin(), flag.choices.end(), value) ==
          flag.choices.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag.name, " is \"", value, "\"; expected one of ", flag.value_name));
  }
  if (auto* text = std::get_if<std::string*>(&flag.target)) {
    **text = std::string(value);
  } else if (auto* number = std::get_if<int64_t*>(&flag.target)) {
    if (!absl::SimpleAtoi(value, *number)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag.name, " is \"", value, "\"; expected an integer"));
    }
  } else if (auto* list = std::get_if<std::vector<std::string>*>(&flag.target)) {
    (*list)->emplace_back(value);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FlagSet::Parse(
    const std::vector<std::string>& args) const {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (!absl::StartsWith(arg, "--")) {
      positional.push_back(arg);
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag ", name));
    }
    if (auto* on = std::get_if<bool*>(&flag->target)) {
      if (equals != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " is a switch and takes no value"));
      }
      **on = true;
      continue;
    }
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " needs a value ", flag->value_name));
    }
    if (absl::Status status = Assign(*flag, value); !status.ok()) {
      return status;
    }
  }
  return positional;
}

std::string FlagSet::Help() const {
  std::string out;
  for (const Flag& flag : flags_) {
    std::string usage = flag.name;
    if (!flag.value_name.empty()) absl::StrAppend(&usage, " ", flag.value_name);
    std::string fallback;
    if (auto* text = std::get_if<std::string*>(&flag.target)) {
      if (!(*text)->empty()) fallback = **text;
    } else if (auto* number = std::get_if<int64_t*>(&flag.target)) {
      fallback = absl::StrCat(**number);
    }
    absl::StrAppend(&out, "  ", usage);
    if (usage.size() < 24) out.append(24 - usage.size(), ' ');
    absl::StrAppend(&out, "  ", flag.help);
    if (!fallback.empty()) absl::StrAppend(&out, " (default: ", fallback, ")");
    out += '\n';
  }
  return out;
}

}  // namespace schedcache::cli
