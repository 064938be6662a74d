#include "server/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstddef>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/unix_socket_claim.h"

namespace schedcache {
namespace {

// kMaxUnixPathLength leaves room in a sockaddr_un for the bind path.
constexpr size_t kMaxUnixPathLength =
    sizeof(sockaddr_un{}.sun_path) - 1 - UnixSocketClaim::kBindSuffixLength;

}  // namespace

std::string ListenAddress::ToGrpcUri() const {
  if (kind == Kind::kUnix) return absl::StrCat("unix:", path);
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

ListenAddress ListenAddress::WithPort(int new_port) const {
  ListenAddress copy = *this;
  copy.port = new_port;
  return copy;
}

bool ListenAddress::IsLoopback() const {
  if (kind != Kind::kTcp) return false;
  if (host == "localhost") return true;
  in_addr v4;
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (::inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view text) {
  ListenAddress address;
  if (absl::ConsumePrefix(&text, "unix:")) {
    if (text.empty()) {
      return absl::InvalidArgumentError("listen address \"unix:\" has no path");
    }
    if (text.size() > kMaxUnixPathLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("unix socket path \"", text, "\" is longer than ",
                       kMaxUnixPathLength, " bytes"));
    }
    address.kind = ListenAddress::Kind::kUnix;
    address.path = std::string(text);
    return address;
  }
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address \"", text,
        "\" is neither unix:PATH nor HOST:PORT (\":PORT\" means loopback)"));
  }
  absl::string_view host = text.substr(0, colon);
  const absl::string_view port_text = text.substr(colon + 1);
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address \"", text, "\": port \"", port_text,
        "\" is not a number in 0..65535"));
  }
  if (absl::ConsumePrefix(&host, "[") && !absl::ConsumeSuffix(&host, "]")) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", text, "\": unbalanced '['"));
  }
  address.kind = ListenAddress::Kind::kTcp;
  address.host = host.empty() ? "127.0.0.1" : std::string(host);
  address.port = port;
  return address;
}

}  // namespace schedcache
