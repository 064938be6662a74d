// `schedcache topology`: show a topology as schedcache models it.
#include <memory>

#include "client/cli/topology_output.h"
#include "client/cli/verb.h"
#include "topology/topology_source.h"

namespace schedcache::cli {
namespace {

class TopologyVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "show the packages, NUMA nodes and LLCs of a topology";
  }

  void DefineFlags(FlagSet& flags) override {
    flags.AddString("--source", "SOURCE",
                    "host, synthetic:HWLOC_SYNTHETIC_STRING or xml:PATH",
                    &source_);
    common_.DefineFormat(flags);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    absl::StatusOr<Topology> topology = LoadTopology(source_);
    if (!topology.ok()) {
      err << "schedcache topology: " << topology.status() << "\n";
      return kExitError;
    }
    if (!common_.json()) {
      out << TopologyTable(*topology);
      return kExitOk;
    }
    absl::StatusOr<std::string> json = TopologyJson(*topology);
    if (!json.ok()) {
      err << "schedcache topology: " << json.status() << "\n";
      return kExitError;
    }
    out << *json << "\n";
    return kExitOk;
  }

 private:
  CommonFlags common_;
  std::string source_ = std::string(kHostSource);
};

}  // namespace

std::unique_ptr<Verb> MakeTopologyVerb() {
  return std::make_unique<TopologyVerb>();
}

}  // namespace schedcache::cli
