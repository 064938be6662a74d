// The WatchPreferences stream and GetTopology's answer, read into what
// bpfmaps/preference_mirror.h takes: `schedcache mirror` feeds the pinned
// BPF maps (docs/INTEGRATION.md) from them. The maps' reason codes are the
// API's (bpfmaps/schedcache_maps_reason_test checks each pair), so a reason
// passes through unchanged.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_API_MIRROR_CONVERT_H_
#define SCHEDCACHE_API_MIRROR_CONVERT_H_

#include "bpfmaps/pinned_maps.h"
#include "bpfmaps/preference_mirror.h"
#include "schedcache/v1/schedcache.pb.h"
#include "schedcache/v1/topology.pb.h"

namespace schedcache {

// ToLlcCpuLists takes the dense LLCs' CPU lists of a GetTopology answer;
// an LLC whose id is not below the answer's LLC count is left out.
LlcCpuLists ToLlcCpuLists(const v1::Topology& topology);

// ToMirroredPreference takes one snapshot entry (change.snapshot() true).
MirroredPreference ToMirroredPreference(const v1::PreferenceChange& entry);

// ToMirroredChange takes what a change after the snapshot says.
MirroredChange ToMirroredChange(const v1::PreferenceChange& change);

}  // namespace schedcache

#endif  // SCHEDCACHE_API_MIRROR_CONVERT_H_
