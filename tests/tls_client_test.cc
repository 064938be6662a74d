// The C++ client library against an in-process Server over TLS and mutual
// TLS, TlsCredentials' checks and reload, the refusal of plain TCP off
// loopback, and the read-only listener, call by call. Certificates are made
// by Debian's openssl CLI in a temporary directory (skipped without it).
// tests/python/transport_security_test.py covers the same from Python
// grpcio and the CLI, and rotation as seen on the wire.
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedcache/client.h"
#include "server/server.h"
#include "server/tls_credentials.h"
#include "tests/server_fixture.h"
#include "tests/subprocess.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;
using test_support::TempDir;
using test_support::ReadFile;

constexpr char kOpenssl[] = "/usr/bin/openssl";

// Openssl runs the openssl CLI and expects it to succeed.
void Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), kOpenssl);
  const test_support::CommandResult result = test_support::RunCommand(args);
  ASSERT_EQ(result.exit_code, 0) << args[1] << ": " << result.err;
}

// Pki: a CA in `dir` and leaf certificates it signs, each for 127.0.0.1
// and localhost, as PEM files named after `name`.
class Pki {
 public:
  Pki(std::string dir, std::string name)
      : dir_(std::move(dir)), name_(std::move(name)) {
    Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-keyout",
             Path("ca.key"), "-out", ca(), "-subj", "/CN=" + name_ + " CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
             "keyUsage=critical,keyCertSign,cRLSign"});
  }

  std::string ca() const { return Path("ca.pem"); }
  std::string cert(const std::string& leaf) const {
    return Path(leaf + ".pem");
  }
  std::string key(const std::string& leaf) const { return Path(leaf + ".key"); }

  // Issue signs certificate `leaf` for `usage` (serverAuth, clientAuth).
  void Issue(const std::string& leaf, const std::string& usage) const {
    const std::string extensions = Path(leaf + ".ext");
    std::ofstream(extensions)
        << "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        << "extendedKeyUsage=" << usage << "\nbasicConstraints=CA:FALSE\n";
    Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key(leaf), "-out", Path(leaf + ".csr"),
             "-subj", "/CN=" + leaf});
    Openssl({"x509", "-req", "-in", Path(leaf + ".csr"), "-CA", ca(), "-CAkey",
             Path("ca.key"), "-set_serial", "1", "-days", "1", "-extfile",
             extensions, "-out", cert(leaf)});
  }

 private:
  std::string Path(const std::string& leaf) const {
    return absl::StrCat(dir_, "/", name_, "-", leaf);
  }

  const std::string dir_;
  const std::string name_;
};

class TlsClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::access(kOpenssl, X_OK) != 0) return;
    dir_ = new TempDir();
    good_ = new Pki(dir_->path(), "good");
    other_ = new Pki(dir_->path(), "other");
    good_->Issue("server", "serverAuth");
    good_->Issue("client", "clientAuth");
    other_->Issue("stranger", "clientAuth");
  }
  static void TearDownTestSuite() {
    delete good_;
    delete other_;
    delete dir_;
  }

  void SetUp() override {
    if (dir_ == nullptr) GTEST_SKIP() << "no " << kOpenssl;
  }

  static TlsFiles ServerFiles(bool mutual) {
    return {good_->cert("server"), good_->key("server"),
            mutual ? good_->ca() : std::string()};
  }

  // StartTls starts a server on 127.0.0.1 port 0 with `files`.
  static std::unique_ptr<Server> StartTls(const TlsFiles& files) {
    ServerOptions options;
    options.listen = {"127.0.0.1:0"};
    absl::StatusOr<std::unique_ptr<TlsCredentials>> tls =
        TlsCredentials::Create(files);
    EXPECT_TRUE(tls.ok()) << tls.status();
    if (!tls.ok()) return nullptr;
    options.tls = *std::move(tls);
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::Start(std::move(options));
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // Connect makes a client to `address` trusting `ca`, presenting the
  // certificate `leaf` of `pki` when given.
  static std::unique_ptr<client::Client> Connect(const std::string& address,
                                                 const std::string& ca,
                                                 const Pki* pki = nullptr,
                                                 const std::string& leaf = "") {
    client::Options options;
    options.address = address;
    options.deadline = absl::Seconds(10);
    client::TlsOptions tls;
    tls.root_certs = ReadFile(ca);
    if (pki != nullptr) {
      tls.cert_chain = ReadFile(pki->cert(leaf));
      tls.private_key = ReadFile(pki->key(leaf));
    }
    options.tls = tls;
    return client::Client::Connect(options);
  }

  static TempDir* dir_;
  static Pki* good_;
  static Pki* other_;
};

TempDir* TlsClientTest::dir_ = nullptr;
Pki* TlsClientTest::good_ = nullptr;
Pki* TlsClientTest::other_ = nullptr;

TEST_F(TlsClientTest, ClientCallsOverTlsAndIsRefusedTrustingAnotherCa) {
  std::unique_ptr<Server> server = StartTls(ServerFiles(/*mutual=*/false));
  ASSERT_NE(server, nullptr);
  const std::string address = server->addresses().front();
  absl::StatusOr<v1::GetTopologyResponse> topology =
      Connect(address, good_->ca())->GetTopology("");
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_GT(topology->topology().total_cpus(), 0);

  EXPECT_EQ(Connect(address, other_->ca())->ListPolicies().status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(TlsClientTest, MutualTlsServesOnlyClientsWithACertificateOfItsCa) {
  std::unique_ptr<Server> server = StartTls(ServerFiles(/*mutual=*/true));
  ASSERT_NE(server, nullptr);
  const std::string address = server->addresses().front();
  absl::StatusOr<v1::ListSessionsResponse> sessions =
      Connect(address, good_->ca(), good_, "client")->ListSessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  EXPECT_EQ(sessions->sessions(0).name(), "default");

  EXPECT_EQ(Connect(address, good_->ca())->ListSessions().status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(Connect(address, good_->ca(), other_, "stranger")
                ->ListSessions()
                .status()
                .code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(TlsClientTest, CreateAndReloadNameTheFlagAndPathOfABadFile) {
  TlsFiles files = ServerFiles(/*mutual=*/false);
  files.key_file = good_->key("client");  // another certificate's key
  absl::Status mismatched = TlsCredentials::Create(files).status();
  EXPECT_EQ(mismatched.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.message(),
              HasSubstr(absl::StrCat("--tls_key_file=", files.key_file,
                                     ": not the key of the certificate in "
                                     "--tls_cert_file=",
                                     files.cert_file)));

  // The served files are copied at Create: a Reload that finds the key
  // file gone fails naming it.
  const std::string key = dir_->path() + "/reload.key";
  std::ofstream(key) << ReadFile(good_->key("server"));
  files.key_file = key;
  absl::StatusOr<std::unique_ptr<TlsCredentials>> tls =
      TlsCredentials::Create(files);
  ASSERT_TRUE(tls.ok()) << tls.status();
  ASSERT_EQ(::unlink(key.c_str()), 0);
  const absl::Status gone = (*tls)->Reload();
  EXPECT_EQ(gone.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(gone.message(),
              HasSubstr(absl::StrCat("--tls_key_file=", key, ": cannot read")));
}

TEST_F(TlsClientTest, PlainTcpOffLoopbackIsRefusedUnlessTlsOrAllowed) {
  ServerOptions options;
  options.listen = {"0.0.0.0:0"};
  const absl::Status refused = Server::CheckTransportSecurity(options);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              HasSubstr("refusing to listen on 0.0.0.0:0 without TLS"));
  EXPECT_THAT(refused.message(), HasSubstr("--allow_insecure_tcp"));
  EXPECT_EQ(Server::Start(options).status().code(),
            absl::StatusCode::kInvalidArgument);

  options.allow_insecure_tcp = true;
  EXPECT_TRUE(Server::CheckTransportSecurity(options).ok());
  options.allow_insecure_tcp = false;
  absl::StatusOr<std::unique_ptr<TlsCredentials>> tls =
      TlsCredentials::Create(ServerFiles(/*mutual=*/false));
  ASSERT_TRUE(tls.ok()) << tls.status();
  options.tls = *std::move(tls);
  EXPECT_TRUE(Server::CheckTransportSecurity(options).ok());
  // Loopback and Unix sockets need neither.
  ServerOptions local;
  local.listen = {"127.0.0.1:0", "[::1]:0", "localhost:0", "unix:/tmp/x.sock"};
  EXPECT_TRUE(Server::CheckTransportSecurity(local).ok());
}

TEST_F(TlsClientTest, ReadOnlyListenerServesReadsAndRefusesEachWrite) {
  TempDir socket_dir;
  ServerOptions options;
  options.listen = {"unix:" + socket_dir.path() + "/full.sock"};
  options.read_only_listen = {"127.0.0.1:0"};
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Start(std::move(options));
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string read_only = (*server)->read_only_addresses().front();
  client::Options client_options;
  client_options.address = read_only;
  std::unique_ptr<client::Client> client =
      client::Client::Connect(client_options);

  EXPECT_TRUE(client->GetTopology("").ok());
  EXPECT_TRUE(client->ListPolicies().ok());
  EXPECT_TRUE(client->GetSession("default").ok());
  EXPECT_TRUE(client->ListSessions().ok());
  EXPECT_TRUE(client->GetReport("default").ok());
  // Nothing ingested: the reading Recommend is served and finds no such
  // process (NOT_FOUND, not PERMISSION_DENIED).
  v1::RecommendRequest recommend;
  recommend.set_tgid(100);
  EXPECT_EQ(client->Recommend(recommend).status().code(),
            absl::StatusCode::kNotFound);

  const std::string listener =
      absl::StrCat(" is not served on the read-only listener ", read_only);
  auto expect_denied = [&](const absl::Status& status, const char* what) {
    EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << what;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat(what, listener)));
  };
  expect_denied(
      client->CreateSession(test_support::TwoLlcSessionRequest("ro")).status(),
      "CreateSession");
  expect_denied(client->DeleteSession("default"), "DeleteSession");
  recommend.set_scan(true);
  expect_denied(client->Recommend(recommend).status(), "Recommend with scan");
  std::unique_ptr<client::IngestWriter> writer = client->StartIngest("");
  expect_denied(writer->Finish().status(), "Ingest");
}

}  // namespace
}  // namespace schedcache
