#include "api/topology_proto.h"

#include "google/protobuf/repeated_field.h"

namespace schedcache {
namespace {

void AddCpus(const CpuSet& cpus,
             google::protobuf::RepeatedField<uint32_t>* out) {
  out->Reserve(cpus.Count());
  cpus.ForEach([out](int cpu) { out->Add(static_cast<uint32_t>(cpu)); });
}

}  // namespace

v1::Topology TopologyToProto(const Topology& topology) {
  v1::Topology out;
  out.set_source(topology.source());
  out.set_total_cpus(static_cast<uint32_t>(topology.cpus().size()));
  out.set_cores(static_cast<uint32_t>(topology.num_cores()));
  out.set_smt_threads(static_cast<uint32_t>(topology.smt_threads()));
  for (const CpuGroup& group : topology.packages()) {
    v1::Package* package = out.add_packages();
    package->set_id(static_cast<uint32_t>(group.id));
    AddCpus(group.cpus, package->mutable_cpus());
  }
  for (const CpuGroup& group : topology.numa_nodes()) {
    v1::NumaNode* node = out.add_numa_nodes();
    node->set_id(static_cast<uint32_t>(group.id));
    AddCpus(group.cpus, node->mutable_cpus());
  }
  for (const Llc& llc : topology.llcs()) {
    v1::Llc* msg = out.add_llcs();
    msg->set_id(static_cast<uint32_t>(llc.id));
    msg->set_level(static_cast<uint32_t>(llc.level));
    msg->set_size_bytes(static_cast<uint64_t>(llc.size_bytes));
    AddCpus(llc.cpus, msg->mutable_cpus());
    msg->set_synthesized(llc.synthesized);
  }
  AddCpus(topology.online_cpus(), out.mutable_online_cpus());
  out.set_max_llcs_per_numa_node(
      static_cast<uint32_t>(topology.MaxLlcsPerNode()));
  return out;
}

}  // namespace schedcache
