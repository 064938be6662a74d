/* pref_probe.bpf.c: a BPF_PROG_TYPE_SYSCALL program that asks the pinned
 * schedcache maps, through the layout header's helper, for the preferred
 * LLC of the tgid in its context, as a sched_ext scheduler would. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpfmaps/schedcache_maps.h"
#include "bpfmaps/schedcache_maps.bpf.h"
#include "bpfmaps/testing/pref_probe.h"

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
