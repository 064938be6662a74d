// `schedcache session create|list|delete`: manage a server's sessions.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"
#include "common/service_defaults.h"
#include "schedcache/session_request.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "session";

const char* TriggerName(v1::ScanTrigger trigger) {
  return trigger == v1::SCAN_TRIGGER_QUERY ? "query" : "tick";
}

class SessionVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "create, list or delete sessions (session create|list|delete)";
  }
  absl::string_view positional_usage() const override {
    return "create|list|delete";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineFormat(flags);
    flags.AddString("--name", "NAME", "create, delete: the session's name",
                    &name_);
    flags.AddString("--topology", "SOURCE",
                    "create: host, synthetic:HWLOC_SYNTHETIC_STRING or "
                    "xml:PATH (a local file, uploaded)",
                    &topology_);
    flags.AddString("--policies", "P1,P2,...",
                    "create: policies, the first is the reference", &policies_);
    flags.AddChoice("--trigger", {"tick", "query"},
                    "create: scans on the kernel's tick, or only on "
                    "`recommend --scan`",
                    &trigger_);
    flags.AddRepeated("--set", "KEY=VALUE",
                      "create: a tunable (model or policy; POLICY.KEY for one "
                      "policy); repeatable",
                      &settings_);
  }

  int Run(const std::vector<std::string>& positional, std::ostream& out,
          std::ostream& err) override {
    if (positional.size() != 1) {
      return Usage(kVerb, "expected one of create, list, delete", err);
    }
    const std::string& action = positional[0];
    if (action == "create") return Create(out, err);
    if (action == "list") return List(out, err);
    if (action == "delete") return Delete(out, err);
    return Usage(kVerb, "unknown action \"" + action + "\"", err);
  }

 private:
  int Create(std::ostream& out, std::ostream& err) {
    if (name_.empty()) return Usage(kVerb, "create needs --name", err);
    client::SessionSpec spec{.topology = topology_,
                             .policies = absl::StrSplit(policies_, ',',
                                                        absl::SkipEmpty()),
                             .trigger = trigger_,
                             .settings = settings_};
    absl::StatusOr<v1::CreateSessionRequest> request =
        client::BuildCreateSessionRequest(spec, name_);
    if (!request.ok()) {
      // A malformed --set is a usage error; an unreadable file is not.
      if (absl::IsInvalidArgument(request.status())) {
        return Usage(kVerb, std::string(request.status().message()), err);
      }
      return Fail(kVerb, request.status(), err);
    }
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    absl::StatusOr<v1::Session> session = (*client)->CreateSession(*request);
    if (!session.ok()) return Fail(kVerb, session.status(), err);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*session, out);
      if (!printed.ok()) return Fail(kVerb, printed, err);
    } else {
      out << "created session " << session->name() << ": "
          << session->topology_summary() << "; policies "
          << absl::StrJoin(session->policies(), ",") << "; trigger "
          << TriggerName(session->trigger())
          << (session->enabled() ? "" : "; cache-aware scheduling disabled")
          << "\n";
    }
    return kExitOk;
  }

  int List(std::ostream& out, std::ostream& err) {
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    absl::StatusOr<v1::ListSessionsResponse> sessions =
        (*client)->ListSessions();
    if (!sessions.ok()) return Fail(kVerb, sessions.status(), err);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*sessions, out);
      return printed.ok() ? kExitOk : Fail(kVerb, printed, err);
    }
    out << absl::StrFormat("%-16s %-8s %-12s %-10s %-10s %-32s %s\n", "NAME",
                           "TRIGGER", "PROCESSES", "ACCEPTED", "REJECTED",
                           "POLICIES", "TOPOLOGY");
    for (const v1::Session& session : sessions->sessions()) {
      out << absl::StrFormat(
          "%-16s %-8s %-12d %-10d %-10d %-32s %s: %s\n", session.name(),
          TriggerName(session.trigger()), session.processes_tracked(),
          session.events_accepted(), session.events_rejected(),
          absl::StrJoin(session.policies(), ","), session.topology_source(),
          session.topology_summary());
    }
    return kExitOk;
  }

  int Delete(std::ostream& out, std::ostream& err) {
    if (name_.empty()) return Usage(kVerb, "delete needs --name", err);
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    if (absl::Status status = (*client)->DeleteSession(name_); !status.ok()) {
      return Fail(kVerb, status, err);
    }
    if (!common_.json()) out << "deleted session " << name_ << "\n";
    return kExitOk;
  }

  CommonFlags common_;
  std::string name_;
  std::string topology_ = "host";
  std::string policies_ = kDefaultPolicies;
  std::string trigger_ = "tick";
  std::vector<std::string> settings_;
};

}  // namespace

std::unique_ptr<Verb> MakeSessionVerb() {
  return std::make_unique<SessionVerb>();
}

}  // namespace schedcache::cli
