/* schedcache_maps.h: the layout of the pinned BPF maps schedcache keeps
 * (docs/INTEGRATION.md), shared by BPF programs and userspace.
 *
 * One C header, three readers: a BPF scheduler (clang -target bpf), the C++
 * writer (bpfmaps/pinned_maps.h) and any C tool. Every field is a fixed-width
 * __u32/__s32/__u64 (or a char array) at an offset that needs no padding,
 * so the same bytes mean the same thing everywhere; the size asserts at the
 * end turn a layout change into a compile error. Changing any struct means
 * bumping SCHEDCACHE_MAP_ABI_VERSION: a writer refuses pinned maps of
 * another ABI instead of reinterpreting them.
 *
 * In a BPF program that includes vmlinux.h (as sched_ext schedulers do),
 * include vmlinux.h first: this header then takes the __u32 family from it
 * instead of <linux/types.h>, whose definitions would clash.
 */
#ifndef SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_H_
#define SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_H_

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* SCHEDCACHE_MAP_ABI_VERSION: stored in meta.abi_version; bumped on any
 * change to the structs, map types, key types or names below. */
#define SCHEDCACHE_MAP_ABI_VERSION 1

/* SCHEDCACHE_MAX_CPUS: CPUs an llcs entry can describe. 16384 is the
 * server's --max_topology_cpus default, so every topology a default server
 * accepts fits (and it is twice x86's largest NR_CPUS, 8192). The mask is
 * then 2048 bytes and an llcs value 2056 bytes: far below the array map's
 * value limit (KMALLOC_MAX_SIZE, megabytes). A BPF program reads it through
 * the pointer bpf_map_lookup_elem returns and never copies it to its
 * 512-byte stack, so the size costs the program nothing. */
#define SCHEDCACHE_MAX_CPUS 16384
#define SCHEDCACHE_CPU_MASK_WORDS (SCHEDCACHE_MAX_CPUS / 64)

/* SCHEDCACHE_POLICY_NAME_LEN: bytes of meta.policy, NUL included. */
#define SCHEDCACHE_POLICY_NAME_LEN 64

/* Pinned file names under the pin directory; each map also carries its
 * file name as its kernel name (what `bpftool map list` shows). */
#define SCHEDCACHE_PREFS_MAP_NAME "prefs"
#define SCHEDCACHE_LLCS_MAP_NAME "llcs"
#define SCHEDCACHE_META_MAP_NAME "meta"

/* schedcache_reason: why a process has no preferred LLC, with the numbers
 * of the API's NoPreferenceReason (schedcache.proto): two for processes
 * that are gone, and KERNEL_NONE for the `kernel` policy. An entry in prefs always holds a preference,
 * so its reason is SCHEDCACHE_REASON_NONE; the codes are fixed here so that
 * every reader of these maps decodes a reason the same way. */
enum schedcache_reason {
	SCHEDCACHE_REASON_NONE = 0,
	SCHEDCACHE_REASON_NO_DATA = 1,
	SCHEDCACHE_REASON_SINGLE_THREAD = 2,
	SCHEDCACHE_REASON_TOO_MANY_THREADS = 3,
	SCHEDCACHE_REASON_FOOTPRINT_TOO_LARGE = 4,
	SCHEDCACHE_REASON_TIMED_OUT = 5,
	SCHEDCACHE_REASON_DISABLED = 6,
	SCHEDCACHE_REASON_NOT_CACHE_AWARE = 7,
	SCHEDCACHE_REASON_OTHER_NUMA_NODE = 8,
	SCHEDCACHE_REASON_EXITED = 9,
	SCHEDCACHE_REASON_EVICTED = 10,
	SCHEDCACHE_REASON_KERNEL_NONE = 11,
};

/* schedcache_pref: the value of prefs (BPF_MAP_TYPE_LRU_HASH, key __u32
 * tgid). No entry means no preference. Times are on the clock of
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC), so a BPF program can age them. */
struct schedcache_pref {
	__s32 llc;           /* dense LLC id, as in GetTopology; index of llcs */
	__s32 cpu;           /* the preferred CPU, one of the LLC's CPUs */
	__s32 llc_first_cpu; /* first CPU of the LLC's span: the kernel's sd_llc_id */
	__u32 reason;        /* enum schedcache_reason */
	__u64 seq;           /* sequence of the change that wrote this entry */
	__u64 updated_ns;    /* when the writer stored it */
};

/* schedcache_llc: the value of llcs (BPF_MAP_TYPE_ARRAY, key __u32 dense
 * LLC id). CPU c is in the LLC when bit c % 64 of cpus[c / 64] is set.
 * An entry at or beyond meta.nr_llcs has nr_cpus 0. */
struct schedcache_llc {
	__u32 first_cpu;
	__u32 nr_cpus;
	__u64 cpus[SCHEDCACHE_CPU_MASK_WORDS];
};

/* schedcache_meta: the only value of meta (BPF_MAP_TYPE_ARRAY, one entry,
 * key 0). A pinned meta always holds its abi_version: the writer fills it
 * before pinning, and pins meta after prefs and llcs, so a pinned meta
 * means the whole set is there. */
struct schedcache_meta {
	__u32 abi_version; /* SCHEDCACHE_MAP_ABI_VERSION of the writer */
	__u32 nr_llcs;     /* llcs entries in use */
	__u64 incarnation; /* of the server session the preferences come from */
	__u64 last_seq;    /* last change applied to prefs */
	__u64 updated_ns;  /* when meta was last written (bpf_ktime_get_ns clock) */
	char policy[SCHEDCACHE_POLICY_NAME_LEN]; /* NUL-terminated policy name */
};

#ifdef __cplusplus
#define SCHEDCACHE_LAYOUT_ASSERT static_assert
#else
#define SCHEDCACHE_LAYOUT_ASSERT _Static_assert
#endif
/* The sizes (and so the absence of hidden padding) every reader relies on:
 * pref 4 * 4 + 2 * 8 = 32; llc 2 * 4 + 256 * 8 = 2056; meta 2 * 4 + 3 * 8
 * + 64 = 96. */
SCHEDCACHE_LAYOUT_ASSERT(sizeof(struct schedcache_pref) == 32,
			 "schedcache_pref layout changed: bump the ABI");
SCHEDCACHE_LAYOUT_ASSERT(sizeof(struct schedcache_llc) == 2056,
			 "schedcache_llc layout changed: bump the ABI");
SCHEDCACHE_LAYOUT_ASSERT(sizeof(struct schedcache_meta) == 96,
			 "schedcache_meta layout changed: bump the ABI");
#undef SCHEDCACHE_LAYOUT_ASSERT

#if defined(__bpf__)
#include <bpf/bpf_helpers.h>

/* schedcache_llc_has_cpu: whether `cpu` is in `llc`'s mask. */
static __always_inline int schedcache_llc_has_cpu(const struct schedcache_llc *llc,
						  __s32 cpu)
{
	__u32 word;

	if (cpu < 0)
		return 0;
	word = (__u32)cpu / 64;
	/* Without the barrier clang checks a copy of `cpu` and indexes with
	 * another, and the verifier, seeing no bound on the index, refuses
	 * the program. */
	barrier_var(word);
	if (word >= SCHEDCACHE_CPU_MASK_WORDS)
		return 0;
	return (llc->cpus[word] >> ((__u32)cpu % 64)) & 1;
}

/* schedcache_preferred_llc: the preferred LLC of process `tgid` according
 * to the maps `prefs` and `llcs` (pass &prefs, &llcs of the program's map
 * definitions). Returns the dense LLC id and sets *llc to its llcs entry
 * (the CPU mask) and *cpu to the preferred CPU (the LLC's first CPU should
 * the entry name a CPU outside the mask); returns -1 with *llc NULL and
 * *cpu -1 when there is no usable preference. */
static __always_inline __s32 schedcache_preferred_llc(void *prefs, void *llcs, __u32 tgid,
						      const struct schedcache_llc **llc,
						      __s32 *cpu)
{
	/* The verifier wants map keys on the stack. */
	__u32 pref_key = tgid;
	__u32 llc_key;
	__s32 pref_cpu;
	const struct schedcache_pref *pref;
	const struct schedcache_llc *entry;

	*llc = 0;
	*cpu = -1;
	pref = bpf_map_lookup_elem(prefs, &pref_key);
	if (!pref)
		return -1;
	/* Each field is read once: the writer may replace the entry meanwhile,
	 * and one read per field keeps the checks and the result consistent. */
	llc_key = (__u32)pref->llc;
	pref_cpu = pref->cpu;
	if ((__s32)llc_key < 0 || pref->reason != SCHEDCACHE_REASON_NONE)
		return -1;
	entry = bpf_map_lookup_elem(llcs, &llc_key);
	if (!entry || entry->nr_cpus == 0)
		return -1;
	*llc = entry;
	*cpu = schedcache_llc_has_cpu(entry, pref_cpu) ? pref_cpu : (__s32)entry->first_cpu;
	return (__s32)llc_key;
}
#endif /* __bpf__ */

#endif /* SCHEDCACHE_BPFMAPS_SCHEDCACHE_MAPS_H_ */
