/* schedcache_scx.h: what the sched_ext scheduler schedcache_scx.bpf.c and
 * its loader (scx/scx_loader.h, the schedcache-scx binary) share
 * (docs/INTEGRATION.md, "schedcache-scx"). Plain C, fixed-width fields, no
 * implicit padding. Both sides are built from one tree, so there is no ABI
 * version: a change here changes both at once. The maps the scheduler
 * reads are schedcache_maps.h's, which do carry an ABI version. */
#ifndef SCHEDCACHE_SCX_SCHEDCACHE_SCX_H_
#define SCHEDCACHE_SCX_SCHEDCACHE_SCX_H_

#include <linux/types.h>

/* SCHEDCACHE_SCX_MAX_CPUS: CPUs the scheduler's cpu -> LLC table holds;
 * the loader refuses a machine with more possible CPUs. It bounds the
 * loops over CPUs, which the verifier walks once per iteration. */
#define SCHEDCACHE_SCX_MAX_CPUS 512

/* SCHEDCACHE_SCX_NAME: the scheduler's name in sched_ext_ops.name, which
 * /sys/kernel/sched_ext/root/ops shows while it runs. */
#define SCHEDCACHE_SCX_NAME "schedcache"

/* schedcache_scx_counter: the indexes of the per-CPU `counters` array. */
enum schedcache_scx_counter {
	/* A task of a process with a preference put on an idle CPU of its
	 * preferred LLC. */
	SCHEDCACHE_SCX_PLACED_PREFERRED = 0,
	/* Fallback: the preferred LLC had no idle CPU allowed to the task, so
	 * the task was queued to that LLC's queue. */
	SCHEDCACHE_SCX_QUEUED_PREFERRED_BUSY = 1,
	/* Fallback: the process has no preference (no prefs entry, or one the
	 * maps cannot use); placed by its previous CPU's LLC. */
	SCHEDCACHE_SCX_NO_PREFERENCE = 2,
	/* Fallback: the task may run on one CPU only (a per-CPU kthread, or an
	 * affinity of one CPU); queued to that CPU, preference or not. */
	SCHEDCACHE_SCX_PINNED = 3,
	/* A CPU found its own LLC's queue empty and ran a task of another
	 * LLC's queue. */
	SCHEDCACHE_SCX_STEALS = 4,
	/* Latency records dropped because the ring buffer was full. */
	SCHEDCACHE_SCX_LATENCY_LOST = 5,
	/* Fallback: the process has a preference, but the task may run on
	 * only some of the online CPUs, maybe none of its preferred LLC's;
	 * placed as a task without one. */
	SCHEDCACHE_SCX_NARROW_AFFINITY = 6,
	/* Fallback: the preferred LLC had no idle CPU and its queue already
	 * held as many tasks as it has CPUs (over-aggregated); placed as a
	 * task without a preference. */
	SCHEDCACHE_SCX_OVER_AGGREGATED = 7,
	SCHEDCACHE_SCX_NR_COUNTERS = 8,
};

/* schedcache_scx_latency: one first placement of a process by one
 * preference: the first time the scheduler placed a task of `tgid` by the
 * prefs entry of sequence `seq`, sent through the `latencies` ring buffer.
 * placed_ns - updated_ns is the delay from the mirror's write to its first
 * use; both on the bpf_ktime_get_ns() clock (CLOCK_MONOTONIC). */
struct schedcache_scx_latency {
	__u32 tgid;
	__s32 llc;          /* the preferred LLC the task was placed by */
	__u64 seq;          /* prefs entry's seq */
	__u64 updated_ns;   /* prefs entry's updated_ns */
	__u64 placed_ns;    /* bpf_ktime_get_ns() at the placement */
};

/* schedcache_scx_exit: why the kernel unregistered the scheduler, as
 * ops.exit saw it; kind 0 while it runs. */
#define SCHEDCACHE_SCX_EXIT_MSG_LEN 128
struct schedcache_scx_exit {
	__u32 kind;         /* enum scx_exit_kind */
	__u32 pad;
	__s64 exit_code;
	char reason[SCHEDCACHE_SCX_EXIT_MSG_LEN];
	char msg[SCHEDCACHE_SCX_EXIT_MSG_LEN];
};

#ifdef __cplusplus
static_assert(sizeof(struct schedcache_scx_latency) == 32,
              "schedcache_scx_latency has implicit padding");
static_assert(sizeof(struct schedcache_scx_exit) == 16 + 2 * 128,
              "schedcache_scx_exit has implicit padding");
#endif

#endif /* SCHEDCACHE_SCX_SCHEDCACHE_SCX_H_ */
