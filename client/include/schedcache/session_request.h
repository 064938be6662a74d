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

// BuildCreateSessionRequest turns `spec` into the request for a session
// named `name`. An xml: topology is read here and sent as bytes. Returns
// InvalidArgument for a setting that is not KEY=VALUE or an unknown trigger,
// NotFound (naming the source, path and OS reason) when the XML file cannot
// be read.
absl::StatusOr<v1::CreateSessionRequest> BuildCreateSessionRequest(
    const SessionSpec& spec, const std::string& name);

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_INCLUDE_SCHEDCACHE_SESSION_REQUEST_H_
