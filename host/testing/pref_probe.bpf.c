/* pref_probe.bpf.c: a BPF_PROG_TYPE_SYSCALL program that asks the pinned
 * schedcache maps, through the layout header's helper, for the preferred
 * LLC of the tgid in its context, as a sched_ext scheduler would. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "host/schedcache_maps.h"
#include "host/testing/pref_probe.h"

/* Declared as the writer creates them; the test points these at the
 * pinned maps (bpf_map__reuse_fd), so max_entries here is not used. */
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

SEC("syscall")
int pref_probe(struct pref_probe_ctx *ctx)
{
	const struct schedcache_llc *llc;
	__s32 cpu;

	ctx->llc = schedcache_preferred_llc(&prefs, &llcs, ctx->tgid, &llc, &cpu);
	ctx->cpu = cpu;
	ctx->in_mask = llc ? schedcache_llc_has_cpu(llc, cpu) : 0;
	ctx->now_ns = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
