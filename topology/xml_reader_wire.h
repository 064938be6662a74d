// The bytes that pass between a program and its XML reader process
// (topology/xml_reader_process.h): the request (the XML, its name and the
// CPU limit) and the answer (a TopologySpec or an error status). Each value
// is a little-endian uint64 or a length-prefixed string; decoding checks
// every length against what is left, so a cut or garbled answer is an
// error, never a read past the end or a huge allocation.
#ifndef SCHEDCACHE_TOPOLOGY_XML_READER_WIRE_H_
#define SCHEDCACHE_TOPOLOGY_XML_READER_WIRE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/topology.h"
#include "topology/topology_source.h"

namespace schedcache::xml_reader_wire {

struct Request {
  std::string name;  // the topology's name, for Topology::source() and errors
  TopologyLimits limits;
  std::string xml;
};

std::string EncodeRequest(const Request& request);
// DecodeRequest returns InvalidArgument naming the byte offset where `bytes`
// stop making sense.
absl::StatusOr<Request> DecodeRequest(absl::string_view bytes);

// EncodeAnswer encodes the reader's result: the spec, or its error's code and
// message.
std::string EncodeAnswer(const absl::StatusOr<TopologySpec>& answer);
// DecodeAnswer returns the spec or the reader's own error as it was encoded;
// Internal naming the byte offset when `bytes` are not an answer.
absl::StatusOr<TopologySpec> DecodeAnswer(absl::string_view bytes);

}  // namespace schedcache::xml_reader_wire

#endif  // SCHEDCACHE_TOPOLOGY_XML_READER_WIRE_H_
