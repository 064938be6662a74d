/* kernel_decisions.h: the records kernel_decisions.bpf.c hands to
 * userspace (collector/kernel_decision_source.h), shared by the BPF program and
 * the C++ loader. Plain C, fixed-width fields, no implicit padding, so the
 * same bytes mean the same thing on both sides (docs/LIVE.md, Kernel
 * decisions). Both sides are built from one tree, so there is no ABI
 * version: a change here changes both at once. */
#ifndef SCHEDCACHE_COLLECTOR_KERNEL_DECISIONS_H_
#define SCHEDCACHE_COLLECTOR_KERNEL_DECISIONS_H_

#include <linux/types.h>

/* schedcache_kdec_record: one return of task_cache_work, as the fexit
 * program saw it. Times in jiffies unless named _ns. */
struct schedcache_kdec_record {
	__u64 timestamp_ns;   /* bpf_ktime_get_ns() at the return */
	__u64 group;          /* the task's sched_cache_grp (kernel address;
	                       * userspace hashes it and never writes it) */
	__u64 nr_running_avg; /* group->nr_running_avg after the call */
	__u64 footprint;      /* group->footprint */
	__u64 jiffies;        /* jiffies at the return */
	__u64 group_epoch;    /* group->epoch after the call */
	__u64 next_scan;      /* group->next_scan after the call */
	__u64 cpu_epoch;      /* this CPU's rq->cpu_epoch */
	__u64 cpu_epoch_next; /* this CPU's rq->cpu_epoch_next */
	__s32 cpu;            /* the CPU the work ran on */
	__s32 tgid;
	__s32 tid;
	__s32 preferred_cpu;  /* group->cpu after the call; -1: none */
	__u32 scanned;        /* 1: next_scan moved during the call */
	__u32 pad;
};

/* schedcache_ktick_record: one scheduler tick (sched_tick) on one CPU, as
 * the fentry program saw it; tid and tgid 0: the CPU was idle. The
 * running thread's NUMA attributes, which the tick's account_mm_sched and
 * the task_cache_work it queues read, come with it; `known` says which
 * the running kernel has (its BTF may lack the fields, and a thread
 * without a group has no footprint). */
struct schedcache_ktick_record {
	__u64 timestamp_ns;   /* bpf_ktime_get_ns() at the tick */
	__u64 jiffies;        /* jiffies then */
	__u64 footprint;      /* the thread's sched_cache_grp->footprint
	                       * (pages), when known & SCHEDCACHE_KTICK_FOOTPRINT */
	__s32 cpu;
	__s32 tgid;
	__s32 tid;            /* the thread the tick found running */
	__s32 numa_preferred_nid; /* its numa_preferred_nid (-1: none), when
	                           * known & SCHEDCACHE_KTICK_NUMA_NID */
	__u32 known;          /* SCHEDCACHE_KTICK_* bits */
	__u32 pad;
};

/* The bits of schedcache_ktick_record.known. */
#define SCHEDCACHE_KTICK_NUMA_NID 1u
#define SCHEDCACHE_KTICK_FOOTPRINT 2u

/* schedcache_kclock_ctx: the context of the clock probe (a syscall
 * program run by BPF_PROG_TEST_RUN; the kernel copies it back). */
struct schedcache_kclock_ctx {
	__u64 now_ns;         /* out: bpf_ktime_get_ns() */
	__u64 jiffies;        /* out: jiffies, read just after now_ns */
	__u64 cpu_epoch;      /* out: CPU 0's rq->cpu_epoch */
	__u64 cpu_epoch_next; /* out: CPU 0's rq->cpu_epoch_next */
};

#ifdef __cplusplus
static_assert(sizeof(struct schedcache_kdec_record) == 96,
              "schedcache_kdec_record has implicit padding");
static_assert(sizeof(struct schedcache_ktick_record) == 48,
              "schedcache_ktick_record has implicit padding");
static_assert(sizeof(struct schedcache_kclock_ctx) == 32,
              "schedcache_kclock_ctx has implicit padding");
#endif

#endif /* SCHEDCACHE_COLLECTOR_KERNEL_DECISIONS_H_ */
