#include "api/proto_json.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/util/json_util.h"

namespace schedcache {

absl::StatusOr<std::string> MessageToJson(
    const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  const google::protobuf::util::Status printed =
      google::protobuf::util::MessageToJsonString(message, &json, options);
  if (printed.ok()) return json;
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot write ", message.GetTypeName(), " as JSON: ",
      absl::string_view(printed.message().data(), printed.message().size())));
}

absl::Status MessageFromJson(std::string_view json,
                             google::protobuf::Message& message) {
  message.Clear();
  const google::protobuf::util::Status parsed =
      google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(json.data(), json.size()), &message);
  if (parsed.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "not JSON of ", message.GetTypeName(), ": ",
      absl::string_view(parsed.message().data(), parsed.message().size())));
}

}  // namespace schedcache
