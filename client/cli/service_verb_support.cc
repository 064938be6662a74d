#include "client/cli/service_verb_support.h"

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"

namespace schedcache::cli {

std::unique_ptr<client::Client> Connect(const CommonFlags& common) {
  client::Options options;
  options.address = common.server;
  return client::Client::Connect(options);
}

void PrintJson(const google::protobuf::Message& message, std::ostream& out) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string json;
  // Printing a well-formed message cannot fail.
  if (!google::protobuf::util::MessageToJsonString(message, &json, options)
           .ok()) {
    json = "{}";
  }
  out << json << "\n";
}

int Fail(absl::string_view verb, const absl::Status& status,
         std::ostream& err) {
  err << "schedcache " << verb << ": " << status << "\n";
  return kExitError;
}

int Usage(absl::string_view verb, absl::string_view message,
          std::ostream& err) {
  err << "schedcache " << verb << ": " << message << "\nRun 'schedcache "
      << verb << " --help' for usage.\n";
  return kExitUsage;
}

std::string LlcName(int llc) { return llc < 0 ? "-" : absl::StrCat(llc); }

}  // namespace schedcache::cli
