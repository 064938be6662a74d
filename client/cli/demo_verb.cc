// `schedcache demo`: the quick-start's main job. Until A/B evaluation lands
// it shows the two topologies the evaluation runs on: this machine and the
// built-in 384-CPU EPYC 9654 shape.
#include <memory>

#include "client/cli/topology_output.h"
#include "client/cli/verb.h"
#include "topology/topology_source.h"

namespace schedcache::cli {
namespace {

class DemoVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "show this machine's topology and the built-in 384-CPU EPYC one";
  }

  void DefineFlags(FlagSet&) override {}

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    int exit_code = kExitOk;
    bool first = true;
    for (absl::string_view source : {kHostSource, kEpyc9654Shape}) {
      if (!first) out << "\n";
      first = false;
      absl::StatusOr<Topology> topology = LoadTopology(source);
      if (!topology.ok()) {
        err << "schedcache demo: " << topology.status() << "\n";
        exit_code = kExitError;
        continue;
      }
      out << TopologyTable(*topology);
    }
    return exit_code;
  }
};

}  // namespace

std::unique_ptr<Verb> MakeDemoVerb() { return std::make_unique<DemoVerb>(); }

}  // namespace schedcache::cli
