/* schedcache_maps.bpf.h: the pinned `prefs` and `llcs` maps of
 * schedcache_maps.h, declared for a BPF program that reads them (a
 * sched_ext scheduler, a probe). Its loader points them at the pinned
 * files with bpf_map__reuse_fd before loading, so the pinned maps' sizes
 * replace the max_entries placeholders here and the program never makes a
 * copy of its own. Include it after <bpf/bpf_helpers.h> and
 * schedcache_maps.h, in one compilation unit of the program. */
#ifndef SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_BPF_H_
#define SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_BPF_H_

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct schedcache_pref);
} prefs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct schedcache_llc);
} llcs SEC(".maps");

#endif /* SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_BPF_H_ */
