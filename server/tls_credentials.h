// TlsCredentials: the TLS identity (and, for mutual TLS, the client CA) of
// schedcached's TCP listeners, re-read on request (SIGHUP in main.cc).
//
// gRPC 1.51 can change a running server's certificates only through a
// certificate provider; of its two, StaticDataCertificateProvider is fixed
// once built, and FileWatcherCertificateProvider re-reads its files on a
// timer, whenever they change, half-written or not. So the provider here
// watches private copies, not the operator's files: Create and Reload read
// the operator's files, check that they parse and that the key matches the
// certificate, and only then swap the copies in, in one rename of a
// directory symlink (the watcher reads key and certificate as one pair, so
// it never pairs an old key with a new certificate). A rotation therefore
// takes effect only on Reload, only with a good pair, within the watcher's
// one-second period; a bad pair is reported and the served one kept.
//
// Thread contract: thread-compatible (main.cc calls Reload from its signal
// loop only); server_credentials may be used from any thread.
#ifndef SCHEDCACHE_SERVER_TLS_CREDENTIALS_H_
#define SCHEDCACHE_SERVER_TLS_CREDENTIALS_H_

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace schedcache {

// TlsFiles names the PEM files of the server flags of the same names.
struct TlsFiles {
  std::string cert_file;       // --tls_cert_file: certificate chain
  std::string key_file;        // --tls_key_file: its private key
  std::string client_ca_file;  // --tls_client_ca_file: empty, no mTLS

  // enabled: any TLS flag given (Create then requires cert and key).
  bool enabled() const {
    return !cert_file.empty() || !key_file.empty() || !client_ca_file.empty();
  }
};

class TlsCredentials {
 public:
  // Create reads and checks `files` and starts gRPC's watcher on the
  // private copies (in a fresh 0700 directory under $TMPDIR or /tmp).
  // Errors: InvalidArgument naming the flag and the path, for a flag
  // missing, a file unreadable, not PEM, or a key that does not match the
  // certificate; Unavailable when the private copies cannot be written.
  static absl::StatusOr<std::unique_ptr<TlsCredentials>> Create(TlsFiles files);

  ~TlsCredentials();  // removes the private copies
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  // server_credentials serves the current pair; with a client CA, client
  // certificates are required and verified against it.
  std::shared_ptr<grpc::ServerCredentials> server_credentials() const {
    return credentials_;
  }

  // Reload re-reads the files named at Create and, when they pass Create's
  // checks, serves them from the next handshake on (within a second).
  // Errors as Create's; the served files are then unchanged.
  absl::Status Reload();

 private:
  TlsCredentials(TlsFiles files, std::string private_dir);

  // Install writes the checked PEM text as generation `generation_ + 1`
  // and points the watched symlink at it.
  absl::Status Install(const std::string& cert, const std::string& key,
                       const std::string& client_ca);

  const TlsFiles files_;
  const std::string private_dir_;
  int generation_ = 0;  // 0: nothing installed yet
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_TLS_CREDENTIALS_H_
