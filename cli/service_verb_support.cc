#include "cli/service_verb_support.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "api/proto_json.h"
#include "common/status_macros.h"

namespace schedcache::cli {

namespace {

// ReadPem returns the text of the file `flag` names; empty when not given.
absl::StatusOr<std::string> ReadPem(absl::string_view flag,
                                    const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": cannot read: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<std::optional<client::TlsOptions>> TlsFromFlags(
    const CommonFlags& common) {
  if (common.tls_ca.empty() && common.tls_cert.empty() &&
      common.tls_key.empty() && common.tls_server_name.empty()) {
    return std::optional<client::TlsOptions>();
  }
  if (common.tls_cert.empty() != common.tls_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert and --tls-key go together (given: --tls-cert '",
        common.tls_cert, "', --tls-key '", common.tls_key, "')"));
  }
  client::TlsOptions tls;
  ASSIGN_OR_RETURN(tls.root_certs, ReadPem("--tls-ca", common.tls_ca));
  ASSIGN_OR_RETURN(tls.cert_chain, ReadPem("--tls-cert", common.tls_cert));
  ASSIGN_OR_RETURN(tls.private_key, ReadPem("--tls-key", common.tls_key));
  tls.server_name = common.tls_server_name;
  return tls;
}

}  // namespace

absl::StatusOr<std::unique_ptr<client::Client>> Connect(
    const CommonFlags& common) {
  client::Options options;
  options.address = common.server;
  ASSIGN_OR_RETURN(options.tls, TlsFromFlags(common));
  return client::Client::Connect(options);
}

absl::Status PrintJson(const google::protobuf::Message& message,
                       std::ostream& out) {
  ASSIGN_OR_RETURN(const std::string json, MessageToJson(message));
  out << json << "\n";
  return absl::OkStatus();
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

std::string ReasonText(v1::NoPreferenceReason reason) {
  std::string name = v1::NoPreferenceReason_Name(reason);
  absl::string_view text = name;
  absl::ConsumePrefix(&text, "NO_PREFERENCE_REASON_");
  return absl::AsciiStrToLower(text);
}

}  // namespace schedcache::cli
