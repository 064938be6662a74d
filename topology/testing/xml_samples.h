// Topology XML for tests of what reads it (the topology library, the
// server's CreateSession).
#ifndef SCHEDCACHE_TOPOLOGY_TESTING_XML_SAMPLES_H_
#define SCHEDCACHE_TOPOLOGY_TESTING_XML_SAMPLES_H_

#include "absl/strings/string_view.h"

namespace schedcache {

// kXmlThatCrashesHwloc is one core of two PUs whose Machine object lacks
// complete_cpuset: hwloc 2.9 dereferences the NULL set in
// hwloc_insert_object_by_parent (hwloc_bitmap_set), as topology_xml_fuzzer
// found on an lstopo export with that attribute misspelled; lstopo crashes
// on it too.
constexpr absl::string_view kXmlThatCrashesHwloc =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<topology version=\"2.0\">\n"
    "<object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" "
    "nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
    "<object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
    "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\"/>\n"
    "<object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" "
    "complete_cpuset=\"0x3\">\n"
    "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
    "complete_cpuset=\"0x1\"/>\n"
    "<object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" "
    "complete_cpuset=\"0x2\"/>\n"
    "</object>\n</object>\n</topology>\n";

}  // namespace schedcache

#endif  // SCHEDCACHE_TOPOLOGY_TESTING_XML_SAMPLES_H_
