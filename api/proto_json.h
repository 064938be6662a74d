// The one JSON dialect of the project's messages: protobuf's JSON mapping,
// with lowerCamelCase keys (each field's json_name), 64-bit integers as
// strings, enums by name, and every scalar field written even when it holds
// its default, so a script finds each key in every object. The CLI's
// `--format json`, `ab --json`, the shard files and `ab-merge` all read and
// write through these two functions (docs/EVALUATION.md, docs/SERVICE.md).
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_API_PROTO_JSON_H_
#define SCHEDCACHE_API_PROTO_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace schedcache {

// MessageToJson is `message` as one line of JSON, without a newline.
// Returns InvalidArgument naming the message's type, with protobuf's account
// of the field, when a value has no JSON form (a string that is not UTF-8).
absl::StatusOr<std::string> MessageToJson(
    const google::protobuf::Message& message);

// MessageFromJson parses `json` into `message` (cleared first). Returns
// InvalidArgument with protobuf's account of what is wrong, which names
// the field and its value, when `json` is not JSON of `message`'s type; a
// key the type does not have is an error too.
absl::Status MessageFromJson(std::string_view json,
                             google::protobuf::Message& message);

}  // namespace schedcache

#endif  // SCHEDCACHE_API_PROTO_JSON_H_
