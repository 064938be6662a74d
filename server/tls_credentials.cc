#include "server/tls_credentials.h"

#include <fcntl.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "common/status_macros.h"

namespace schedcache {
namespace {

// kRefreshSeconds: how often gRPC's watcher looks at the private copies,
// i.e. how long after Reload a new pair may take to be served.
constexpr unsigned int kRefreshSeconds = 1;

constexpr char kCertName[] = "cert.pem";
constexpr char kKeyName[] = "key.pem";
constexpr char kClientCaName[] = "client_ca.pem";
constexpr char kCurrentLink[] = "current";

std::string FlagText(absl::string_view flag, absl::string_view path) {
  return absl::StrCat("--", flag, "=", path);
}

absl::StatusOr<std::string> ReadFile(absl::string_view flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(
        FlagText(flag, path), ": cannot read: ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
using PrivateKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())),
             &BIO_free);
}

// NoPassphrase makes OpenSSL fail on an encrypted key instead of prompting
// on the terminal: schedcached has nobody to ask.
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<Certificate> FirstCertificate(absl::string_view flag,
                                             const std::string& path,
                                             const std::string& text) {
  Bio bio = MemoryBio(text);
  Certificate certificate(
      PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr), &X509_free);
  if (certificate == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(FlagText(flag, path), ": no PEM certificate in it"));
  }
  return certificate;
}

// CheckPair accepts a PEM certificate chain and the unencrypted PEM key of
// its first certificate.
absl::Status CheckPair(const TlsFiles& files, const std::string& cert,
                       const std::string& key) {
  ASSIGN_OR_RETURN(Certificate certificate,
                   FirstCertificate("tls_cert_file", files.cert_file, cert));
  Bio bio = MemoryBio(key);
  PrivateKey private_key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr),
      &EVP_PKEY_free);
  if (private_key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(FlagText("tls_key_file", files.key_file),
                     ": no unencrypted PEM private key in it"));
  }
  if (X509_check_private_key(certificate.get(), private_key.get()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(FlagText("tls_key_file", files.key_file),
                     ": not the key of the certificate in ",
                     FlagText("tls_cert_file", files.cert_file)));
  }
  return absl::OkStatus();
}

// WriteNewFile creates `path` with mode 0600 (it may hold a private key).
absl::Status WriteNewFile(const std::string& path, const std::string& text) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot create ", path), errno);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoError(absl::StatusCode::kUnavailable,
                        absl::StrCat("cannot write ", path), err);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0)
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot write ", path), errno);
  return absl::OkStatus();
}

// RemoveGeneration removes one generation directory and its files.
void RemoveGeneration(const std::string& dir) {
  for (const char* name : {kCertName, kKeyName, kClientCaName}) {
    ::unlink(absl::StrCat(dir, "/", name).c_str());
  }
  ::rmdir(dir.c_str());
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsCredentials>> TlsCredentials::Create(
    TlsFiles files) {
  if (files.cert_file.empty() || files.key_file.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls_cert_file and --tls_key_file (given: " +
        FlagText("tls_cert_file", files.cert_file) + " " +
        FlagText("tls_key_file", files.key_file) + ")");
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/schedcached-tls.XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return ErrnoError(
        absl::StatusCode::kUnavailable,
        absl::StrCat("cannot create the private certificate directory ",
                     pattern),
        errno);
  }
  std::unique_ptr<TlsCredentials> tls(
      new TlsCredentials(std::move(files), std::move(pattern)));
  RETURN_IF_ERROR(tls->Reload());

  const std::string current =
      absl::StrCat(tls->private_dir_, "/", kCurrentLink, "/");
  const bool mutual = !tls->files_.client_ca_file.empty();
  auto provider =
      std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          current + kKeyName, current + kCertName,
          mutual ? current + kClientCaName : std::string(), kRefreshSeconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (mutual) {
    options.watch_root_certs();
    options.set_cert_request_type(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  tls->credentials_ = grpc::experimental::TlsServerCredentials(options);
  return tls;
}

TlsCredentials::TlsCredentials(TlsFiles files, std::string private_dir)
    : files_(std::move(files)), private_dir_(std::move(private_dir)) {}

TlsCredentials::~TlsCredentials() {
  ::unlink(absl::StrCat(private_dir_, "/", kCurrentLink).c_str());
  if (generation_ > 0) {
    RemoveGeneration(absl::StrCat(private_dir_, "/", generation_));
  }
  ::rmdir(private_dir_.c_str());
}

absl::Status TlsCredentials::Reload() {
  ASSIGN_OR_RETURN(const std::string cert,
                   ReadFile("tls_cert_file", files_.cert_file));
  ASSIGN_OR_RETURN(const std::string key,
                   ReadFile("tls_key_file", files_.key_file));
  RETURN_IF_ERROR(CheckPair(files_, cert, key));
  std::string client_ca;
  if (!files_.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(client_ca,
                     ReadFile("tls_client_ca_file", files_.client_ca_file));
    RETURN_IF_ERROR(
        FirstCertificate("tls_client_ca_file", files_.client_ca_file, client_ca)
            .status());
  }
  return Install(cert, key, client_ca);
}

absl::Status TlsCredentials::Install(const std::string& cert,
                                     const std::string& key,
                                     const std::string& client_ca) {
  const int next = generation_ + 1;
  const std::string dir = absl::StrCat(private_dir_, "/", next);
  if (::mkdir(dir.c_str(), 0700) != 0) {
    return ErrnoError(absl::StatusCode::kUnavailable,
                      absl::StrCat("cannot create ", dir), errno);
  }
  absl::Status written = WriteNewFile(absl::StrCat(dir, "/", kCertName), cert);
  if (written.ok()) {
    written = WriteNewFile(absl::StrCat(dir, "/", kKeyName), key);
  }
  if (written.ok() && !client_ca.empty()) {
    written = WriteNewFile(absl::StrCat(dir, "/", kClientCaName), client_ca);
  }
  // The new symlink is made aside and renamed over the watched one, so
  // the watcher sees either the old generation or the new, whole.
  const std::string link = absl::StrCat(private_dir_, "/", kCurrentLink);
  const std::string staged = link + ".new";
  if (written.ok() &&
      ::symlink(absl::StrCat(next).c_str(), staged.c_str()) != 0) {
    written = ErrnoError(absl::StatusCode::kUnavailable,
                         absl::StrCat("cannot create ", staged), errno);
  }
  if (written.ok() && ::rename(staged.c_str(), link.c_str()) != 0) {
    written = ErrnoError(absl::StatusCode::kUnavailable,
                         absl::StrCat("cannot rename onto ", link), errno);
    ::unlink(staged.c_str());
  }
  if (!written.ok()) {
    RemoveGeneration(dir);
    return written;
  }
  if (generation_ > 0) {
    RemoveGeneration(absl::StrCat(private_dir_, "/", generation_));
  }
  generation_ = next;
  return absl::OkStatus();
}

}  // namespace schedcache
