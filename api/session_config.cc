#include "api/session_config.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/message_text.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

namespace schedcache {
namespace {

constexpr size_t kMaxSessionNameLength = 64;
// The spec and xml_name become Topology::source(), which every rejected
// sample's message repeats. hwloc's own synthetic exports of large machines
// are a few hundred bytes.
constexpr size_t kMaxTopologySpecLength = 4096;
constexpr size_t kMaxXmlNameLength = 256;
constexpr absl::string_view kSyntheticPrefix = "synthetic:";

TopologyLimits TopologyLimitsOf(int64_t max_cpus) {
  TopologyLimits limits;
  limits.max_cpus = max_cpus;
  limits.how_to_raise = "flag --max_topology_cpus";
  return limits;
}

}  // namespace

ScanTrigger ScanTriggerFromProto(v1::ScanTrigger trigger) {
  return trigger == v1::SCAN_TRIGGER_QUERY ? ScanTrigger::kQuery
                                           : ScanTrigger::kTick;
}

v1::ScanTrigger ScanTriggerToProto(ScanTrigger trigger) {
  return trigger == ScanTrigger::kQuery ? v1::SCAN_TRIGGER_QUERY
                                        : v1::SCAN_TRIGGER_TICK;
}

absl::Status ValidateSessionName(absl::string_view name) {
  const bool valid_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
  });
  if (name.empty() || name.size() > kMaxSessionNameLength || !valid_chars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: ", QuoteForMessage(name),
        " is not a session name (1 to 64 characters of [A-Za-z0-9_.-])"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SessionSettings> BuildSessionSettings(
    const v1::CreateSessionRequest& request, const PolicyRegistry& registry,
    int64_t max_processes) {
  RETURN_IF_ERROR(ValidateSessionName(request.name()));
  SessionChoices choices;
  choices.policies.assign(request.policies().begin(),
                          request.policies().end());
  for (const v1::TunableSetting& setting : request.tunables()) {
    choices.tunables.push_back(TunableSetting{setting.name(), setting.value()});
  }
  choices.trigger = ScanTriggerFromProto(request.trigger());
  ASSIGN_OR_RETURN(SessionSettings settings,
                   ResolveSessionChoices(request.name(), choices, registry,
                                         max_processes));
  if (request.trigger() != v1::SCAN_TRIGGER_UNSPECIFIED &&
      request.trigger() != v1::SCAN_TRIGGER_TICK &&
      request.trigger() != v1::SCAN_TRIGGER_QUERY) {
    return absl::InvalidArgumentError(
        absl::StrCat("trigger: unknown value ", request.trigger()));
  }
  return settings;
}

absl::Status CheckTopologySource(const v1::TopologySource& source,
                                 int64_t max_cpus) {
  switch (source.source_case()) {
    case v1::TopologySource::SOURCE_NOT_SET:
      return absl::OkStatus();
    case v1::TopologySource::kXml:
      if (source.xml_name().size() > kMaxXmlNameLength) {
        return absl::InvalidArgumentError(absl::StrCat(
            "topology.xml_name: ", QuoteForMessage(source.xml_name()),
            " is longer than ", kMaxXmlNameLength, " bytes"));
      }
      return absl::OkStatus();
    case v1::TopologySource::kSpec:
      break;
  }
  const std::string& spec = source.spec();
  if (spec == kHostSource) return absl::OkStatus();
  if (!absl::StartsWith(spec, kSyntheticPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topology.spec: ", QuoteForMessage(spec),
        " is neither \"host\" nor \"synthetic:...\"; send an XML file's "
        "bytes in topology.xml"));
  }
  if (spec.size() > kMaxTopologySpecLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("topology.spec: ", QuoteForMessage(spec),
                     " is longer than ", kMaxTopologySpecLength, " bytes"));
  }
  return CheckSyntheticSource(spec, TopologyLimitsOf(max_cpus));
}

absl::StatusOr<std::shared_ptr<const Topology>> LoadSessionTopology(
    const v1::TopologySource& source, std::shared_ptr<const Topology> host,
    int64_t max_cpus) {
  const TopologyLimits limits = TopologyLimitsOf(max_cpus);
  absl::StatusOr<Topology> topology;
  switch (source.source_case()) {
    case v1::TopologySource::SOURCE_NOT_SET:
      return host;
    case v1::TopologySource::kXml:
      topology = LoadTopologyFromXml(
          source.xml(),
          source.xml_name().empty() ? "uploaded.xml" : source.xml_name(),
          limits);
      break;
    case v1::TopologySource::kSpec:
      if (source.spec() == kHostSource) return host;
      topology = LoadTopology(source.spec(), limits);
      break;
  }
  if (!topology.ok()) return topology.status();
  return std::make_shared<const Topology>(*std::move(topology));
}

}  // namespace schedcache
