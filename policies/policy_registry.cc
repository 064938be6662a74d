#include "policies/policy_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace schedcache {
namespace {

// IsLowerKebab accepts "full-scan": lower-case letters and digits in words
// joined by single dashes.
bool IsLowerKebab(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  char previous = '\0';
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (c == '-' && previous != '-');
    if (!ok) return false;
    previous = c;
  }
  return true;
}

}  // namespace

absl::Status PolicyFactory::Validate(const TunableValues& values) const {
  absl::Status status = ValidateTunables(tunables(), values);
  if (status.ok()) return status;
  return absl::InvalidArgumentError(
      absl::StrCat("policy ", std::string(name()), ": ", status.message()));
}

const PolicyFactory* PolicyRegistry::Find(std::string_view name) const {
  for (const auto& factory : factories_) {
    if (factory->name() == name) return factory.get();
  }
  return nullptr;
}

std::vector<const PolicyFactory*> PolicyRegistry::factories() const {
  std::vector<const PolicyFactory*> out;
  for (const auto& factory : factories_) out.push_back(factory.get());
  return out;
}

absl::Status PolicyRegistryBuilder::Register(
    std::unique_ptr<PolicyFactory> factory) {
  if (factory == nullptr) {
    return absl::InvalidArgumentError("cannot register a null policy factory");
  }
  const std::string name(factory->name());
  if (!IsLowerKebab(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy name '", name, "' is not lower-kebab (e.g. full-scan)"));
  }
  if (registry_.Find(name) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("policy '", name, "' is already registered"));
  }
  registry_.factories_.push_back(std::move(factory));
  return absl::OkStatus();
}

PolicyRegistry PolicyRegistryBuilder::Build() && {
  return std::move(registry_);
}

}  // namespace schedcache
