// What the verbs that talk to schedcached share: connecting from the
// common flags, printing an API message as one line of JSON, and turning an
// error into the CLI's exit code.
//
// Thread contract: thread-safe (pure functions).
#ifndef SCHEDCACHE_CLI_SERVICE_VERB_SUPPORT_H_
#define SCHEDCACHE_CLI_SERVICE_VERB_SUPPORT_H_

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>

#include <google/protobuf/message.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/verb.h"
#include "schedcache/client.h"

namespace schedcache::cli {

// Connect makes a client for `common.server`, over TLS when a TLS flag is
// given. Errors: InvalidArgument naming the flag and the file when a TLS
// file cannot be read, or only one of --tls-cert and --tls-key is given.
absl::StatusOr<std::unique_ptr<client::Client>> Connect(
    const CommonFlags& common);

// PrintJson writes `message` in the project's one JSON dialect
// (api/proto_json.h: protobuf's JSON mapping, defaults included) on one
// line, and a newline. Returns MessageToJson's error, printing nothing.
absl::Status PrintJson(const google::protobuf::Message& message,
                       std::ostream& out);

// Fail prints "schedcache VERB: STATUS" and returns kExitError.
int Fail(absl::string_view verb, const absl::Status& status,
         std::ostream& err);

// Usage prints a usage error for VERB and returns kExitUsage.
int Usage(absl::string_view verb, absl::string_view message,
          std::ostream& err);

// NameColumnWidth is the width of a table's name column: the header's or
// the longest name's (`name_of(row)`), so a long plugin name stays aligned.
template <typename Rows, typename NameOf>
int NameColumnWidth(absl::string_view header, const Rows& rows,
                    NameOf name_of) {
  size_t width = header.size();
  for (const auto& row : rows) width = std::max(width, name_of(row).size());
  return static_cast<int>(width);
}

// LlcName is "-" for -1, else the number.
std::string LlcName(int llc);

// ReasonText is the reason's enum name without its prefix, lower case
// ("not_cache_aware").
std::string ReasonText(v1::NoPreferenceReason reason);

}  // namespace schedcache::cli

#endif  // SCHEDCACHE_CLI_SERVICE_VERB_SUPPORT_H_
