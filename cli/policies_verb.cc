// `schedcache policies`: the policies a server offers and every tunable.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"

namespace schedcache::cli {
namespace {

std::string Range(const v1::Tunable& tunable) {
  if (!tunable.value_names().empty()) {
    return absl::StrJoin(tunable.value_names(), "|");
  }
  return absl::StrFormat("%d..%d", tunable.min_value(), tunable.max_value());
}

// Default names the default value when the tunable has value names
// (numa_balancing "false", enable "auto"), else prints the number.
std::string Default(const v1::Tunable& tunable) {
  const int64_t index = tunable.default_value() - tunable.min_value();
  if (index >= 0 && index < tunable.value_names_size()) {
    return tunable.value_names(static_cast<int>(index));
  }
  return absl::StrCat(tunable.default_value());
}

void PrintTunables(const google::protobuf::RepeatedPtrField<v1::Tunable>& tunables,
                   std::ostream& out) {
  for (const v1::Tunable& tunable : tunables) {
    out << absl::StrFormat("    %-26s default %-10s %-14s %s\n", tunable.name(),
                           Default(tunable), Range(tunable),
                           tunable.description());
  }
}

class PoliciesVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "list the server's policies and their tunables";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineFormat(flags);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail("policies", client.status(), err);
    absl::StatusOr<v1::ListPoliciesResponse> policies =
        (*client)->ListPolicies();
    if (!policies.ok()) return Fail("policies", policies.status(), err);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*policies, out);
      return printed.ok() ? kExitOk : Fail("policies", printed, err);
    }
    const int width = NameColumnWidth(
        "", policies->policies(),
        [](const v1::PolicyInfo& p) -> const std::string& { return p.name(); });
    for (const v1::PolicyInfo& policy : policies->policies()) {
      out << absl::StrFormat("%-*s %s\n", width, policy.name(),
                             policy.description());
      PrintTunables(policy.tunables(), out);
    }
    out << "\nmodel tunables (every session, --set NAME=VALUE):\n";
    PrintTunables(policies->model_tunables(), out);
    return kExitOk;
  }

 private:
  CommonFlags common_;
};

}  // namespace

std::unique_ptr<Verb> MakePoliciesVerb() {
  return std::make_unique<PoliciesVerb>();
}

}  // namespace schedcache::cli
