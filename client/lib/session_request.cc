#include "schedcache/session_request.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

namespace schedcache::client {

absl::StatusOr<SessionSettingText> SplitSessionSetting(
    const std::string& setting) {
  const size_t equals = setting.find('=');
  if (equals == std::string::npos || equals == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set \"", setting, "\" is not KEY=VALUE"));
  }
  return SessionSettingText{setting.substr(0, equals),
                            setting.substr(equals + 1)};
}

absl::StatusOr<v1::ScanTrigger> ParseScanTrigger(const std::string& trigger) {
  if (trigger == "tick") return v1::SCAN_TRIGGER_TICK;
  if (trigger == "query") return v1::SCAN_TRIGGER_QUERY;
  return absl::InvalidArgumentError(
      absl::StrCat("trigger \"", trigger, "\" is not one of: tick, query"));
}

absl::StatusOr<v1::CreateSessionRequest> BuildCreateSessionRequest(
    const SessionSpec& spec, const std::string& name) {
  v1::CreateSessionRequest request;
  request.set_name(name);
  if (absl::StartsWith(spec.topology, "xml:")) {
    // The topology verb's reader, so every client's error names the same
    // things; the server never reads client paths.
    ASSIGN_OR_RETURN(std::string bytes, ReadTopologyXml(spec.topology));
    request.mutable_topology()->set_xml(std::move(bytes));
    request.mutable_topology()->set_xml_name(spec.topology);
  } else {
    request.mutable_topology()->set_spec(spec.topology);
  }
  for (const std::string& policy : spec.policies) {
    request.add_policies(policy);
  }
  for (const std::string& setting : spec.settings) {
    ASSIGN_OR_RETURN(SessionSettingText text, SplitSessionSetting(setting));
    v1::TunableSetting* tunable = request.add_tunables();
    tunable->set_name(std::move(text.name));
    tunable->set_value(std::move(text.value));
  }
  ASSIGN_OR_RETURN(const v1::ScanTrigger trigger,
                   ParseScanTrigger(spec.trigger));
  request.set_trigger(trigger);
  return request;
}

}  // namespace schedcache::client
