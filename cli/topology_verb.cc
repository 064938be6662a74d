// `schedcache topology`: show a topology as schedcache models it, read here
// (--source) or asked of a server (--server, --session: GetTopology), in
// the same formats either way.
#include <memory>
#include <string>

#include "cli/service_verb_support.h"
#include "cli/topology_output.h"
#include "cli/verb.h"
#include "common/status_macros.h"
#include "topology/topology_source.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "topology";

class TopologyVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "show the packages, NUMA nodes and LLCs of a topology, read here "
           "or asked of a server";
  }

  void DefineFlags(FlagSet& flags) override {
    flags.AddString("--source", "SOURCE",
                    "read here: host, synthetic:HWLOC_SYNTHETIC_STRING or "
                    "xml:PATH (default: host)",
                    &source_);
    flags.AddString("--server", "ADDR",
                    "ask this schedcached instead (unix:PATH or HOST:PORT): "
                    "its host's topology, or --session's",
                    &server_);
    flags.AddString("--session", "NAME",
                    "ask the server for this session's topology (the server "
                    "is --server, or " +
                        std::string(kDefaultServer) + ")",
                    &session_);
    common_.DefineTls(flags);
    common_.DefineFormat(flags);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    const bool remote = !server_.empty() || !session_.empty();
    if (remote && !source_.empty()) {
      return Usage(kVerb,
                   "--source reads a topology here; --server and --session "
                   "ask a server: give one or the other",
                   err);
    }
    absl::StatusOr<v1::GetTopologyResponse> described =
        remote ? Ask() : ReadHere();
    if (!described.ok()) return Fail(kVerb, described.status(), err);
    if (!common_.json()) {
      out << TopologyTable(*described);
      return kExitOk;
    }
    const absl::Status printed = PrintJson(described->topology(), out);
    return printed.ok() ? kExitOk : Fail(kVerb, printed, err);
  }

 private:
  absl::StatusOr<v1::GetTopologyResponse> ReadHere() const {
    absl::StatusOr<Topology> topology =
        LoadTopology(source_.empty() ? kHostSource : source_);
    if (!topology.ok()) return topology.status();
    return DescribeTopology(*topology);
  }

  // Ask asks the server; an empty session means the server's host (the
  // API's GetTopology without a session), not the `default` session.
  absl::StatusOr<v1::GetTopologyResponse> Ask() {
    if (!server_.empty()) common_.server = server_;
    ASSIGN_OR_RETURN(std::unique_ptr<client::Client> client, Connect(common_));
    return client->GetTopology(session_);
  }

  CommonFlags common_;
  // Empty when not given: each decides where the topology comes from.
  std::string source_;
  std::string server_;
  std::string session_;
};

}  // namespace

std::unique_ptr<Verb> MakeTopologyVerb() {
  return std::make_unique<TopologyVerb>();
}

}  // namespace schedcache::cli
