#include "cli/verb.h"

namespace schedcache::cli {

void CommonFlags::DefineServer(FlagSet& flags) {
  flags.AddString("--server", "ADDR",
                  "schedcached address, unix:PATH or HOST:PORT", &server);
  DefineTls(flags);
}

void CommonFlags::DefineTls(FlagSet& flags) {
  flags.AddString("--tls-ca", "FILE",
                  "TLS: PEM file of the CA certificates the server's "
                  "certificate must chain to (default with another --tls "
                  "flag: the system's)",
                  &tls_ca);
  flags.AddString("--tls-cert", "FILE",
                  "TLS: PEM file of the client certificate, for a server "
                  "that requires one (with --tls-key)",
                  &tls_cert);
  flags.AddString("--tls-key", "FILE",
                  "TLS: PEM file of the private key of --tls-cert",
                  &tls_key);
  flags.AddString("--tls-server-name", "NAME",
                  "TLS: name the server's certificate must carry (default: "
                  "the host of --server)",
                  &tls_server_name);
}

void CommonFlags::DefineSession(FlagSet& flags) {
  flags.AddString("--session", "NAME", "session to use", &session);
}

void CommonFlags::DefineFormat(FlagSet& flags) {
  flags.AddChoice("--format", {"table", "json"},
                  "table for people, json for programs", &format);
}

}  // namespace schedcache::cli
