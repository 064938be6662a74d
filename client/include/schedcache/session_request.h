// SessionSpec and BuildCreateSessionRequest: a session described in the
// CLI's terms (`session create`, `ab`), turned into the API's request. One
// builder, so every client names topologies, policies, tunables and triggers
// the same way.
//
// Thread contract: plain functions over values; thread-safe.
#ifndef SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_SESSION_REQUEST_H_
#define SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_SESSION_REQUEST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::client {

// SessionSpec describes a session to create.
struct SessionSpec {
  std::string topology;               // "host", "synthetic:...", "xml:PATH"
  std::vector<std::string> policies;  // the first is the reference
  std::string trigger = "tick";       // "tick" or "query"
  std::vector<std::string> settings;  // "KEY=VALUE" (POLICY.KEY for one)
};

// SessionSettingText is one of SessionSpec::settings, split at its first
// '=': the tunable's name and its value, as text.
struct SessionSettingText {
  std::string name;
  std::string value;
};

// SplitSessionSetting splits `setting` ("KEY=VALUE"). Returns
// InvalidArgument naming it when it has no '=' or an empty KEY.
absl::StatusOr<SessionSettingText> SplitSessionSetting(
    const std::string& setting);

// ParseScanTrigger reads SessionSpec::trigger. Returns InvalidArgument
// naming it unless it is "tick" or "query".
absl::StatusOr<v1::ScanTrigger> ParseScanTrigger(const std::string& trigger);

// BuildCreateSessionRequest turns `spec` into the request for a session
// named `name`. An xml: topology is read here and sent as bytes. Returns
// InvalidArgument for a setting that is not KEY=VALUE or an unknown trigger,
// NotFound (naming the source, path and OS reason) when the XML file cannot
// be read.
absl::StatusOr<v1::CreateSessionRequest> BuildCreateSessionRequest(
    const SessionSpec& spec, const std::string& name);

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_SESSION_REQUEST_H_
