#include "client/ab/ab_session.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace schedcache::ab {

absl::StatusOr<v1::CreateSessionRequest> BuildCreateSessionRequest(
    const AbSessionConfig& config, const std::string& name) {
  v1::CreateSessionRequest request;
  request.set_name(name);
  if (absl::StartsWith(config.topology, "xml:")) {
    const std::string path = config.topology.substr(4);
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      return absl::NotFoundError(
          absl::StrCat("topology: cannot read XML file ", path));
    }
    std::ostringstream bytes;
    bytes << file.rdbuf();
    request.mutable_topology()->set_xml(bytes.str());
    request.mutable_topology()->set_xml_name(config.topology);
  } else {
    request.mutable_topology()->set_spec(config.topology);
  }
  for (const std::string& policy : config.policies) {
    request.add_policies(policy);
  }
  for (const std::string& setting : config.settings) {
    const size_t equals = setting.find('=');
    if (equals == std::string::npos || equals == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--set \"", setting, "\" is not KEY=VALUE"));
    }
    v1::TunableSetting* tunable = request.add_tunables();
    tunable->set_name(setting.substr(0, equals));
    tunable->set_value(setting.substr(equals + 1));
  }
  if (config.trigger == "tick") {
    request.set_trigger(v1::SCAN_TRIGGER_TICK);
  } else if (config.trigger == "query") {
    request.set_trigger(v1::SCAN_TRIGGER_QUERY);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "trigger \"", config.trigger, "\" is not one of: tick, query"));
  }
  return request;
}

}  // namespace schedcache::ab
