/* pref_probe.h: the context of pref_probe.bpf.c, shared with the test that
 * runs it through BPF_PROG_TEST_RUN (ctx_in; the kernel copies the context
 * back after the run, which is how the answer comes out). */
#ifndef SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_H_
#define SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_H_

#include <linux/types.h>

struct pref_probe_ctx {
	__u32 tgid;    /* in */
	__s32 llc;     /* out: schedcache_preferred_llc's answer, -1: none */
	__s32 cpu;     /* out: the CPU it picked, -1: none */
	__u32 in_mask; /* out: 1 when cpu is in the returned LLC's mask */
	__u64 now_ns;  /* out: bpf_ktime_get_ns() during the run */
};

#endif /* SCHEDCACHE_BPFMAPS_TESTING_PREF_PROBE_H_ */
