/* schedcache_scx.bpf.c: schedcache's own sched_ext scheduler, which places
 * tasks by the preferred LLCs `schedcache mirror` keeps in the pinned maps
 * prefs and llcs (bpfmaps/schedcache_maps.h; docs/INTEGRATION.md,
 * "schedcache-scx").
 *
 * One dispatch queue (DSQ) per LLC, its id the LLC's dense id.
 *  - A waking task of a process with a preference goes to an idle CPU of
 *    its preferred LLC, its previous CPU first; with none idle it is queued
 *    to that LLC's DSQ, unless that DSQ already holds a task per CPU of
 *    the LLC (over-aggregated): then it is placed as a task without one.
 *  - A task of a process without one goes the same way by its previous
 *    CPU's LLC, and to an idle CPU anywhere before waiting in a queue.
 *  - A CPU with nothing to run takes from its own LLC's DSQ, then from the
 *    others (a steal). A task queued to its preferred LLC is stolen only
 *    once it has waited STEAL_AFTER_NS there; any other queued task at
 *    once. A queued task without a preference gets an idle CPU kicked at
 *    once; one with a preference when a busy CPU of its LLC sees, at a
 *    tick, that it has waited the bound. So no CPU idles while a task it
 *    could run has waited longer than the bound plus a tick, and the
 *    sched_ext watchdog has nothing to fire on.
 *
 * The build host's kernel need not have sched_ext: the few kernel types
 * used are declared below with only the members used (task_struct with
 * preserve_access_index, so libbpf relocates its fields against the running
 * kernel's BTF; sched_ext_ops, whose members libbpf matches by name), and
 * the kfuncs with the signatures of Linux 7.3 (kernel/sched/ext.c). */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfmaps/schedcache_maps.h"
#include "bpfmaps/schedcache_maps.bpf.h"
#include "scx/schedcache_scx.h"

/* Never read here, only passed to kfuncs. libbpf 1.1 matches a kfunc's
 * pointer arguments by kind, so the object's BTF must hold the struct, not
 * a forward declaration: claim_idle_in_llc, a function of its own, takes
 * it as a parameter, which makes clang emit it, while task_struct's
 * cpus_ptr, through which clang would meet it first and emit only a
 * forward declaration, is declared untyped. */
struct cpumask {
	unsigned long bits[1];
};

struct task_struct {
	int tgid;
	int nr_cpus_allowed;
	const void *cpus_ptr; /* const cpumask_t *; see struct cpumask */
} __attribute__((preserve_access_index));

/* libbpf 1.1 relocates an enum field only against a local enum. */
enum scx_exit_kind { SCX_EXIT_NONE };

struct scx_exit_info {
	enum scx_exit_kind kind;
	long long exit_code;
	const char *reason;
	char *msg;
} __attribute__((preserve_access_index));

struct sched_ext_ops {
	__s32 (*select_cpu)(struct task_struct *p, __s32 prev_cpu, __u64 wake_flags);
	void (*enqueue)(struct task_struct *p, __u64 enq_flags);
	void (*dispatch)(__s32 cpu, struct task_struct *prev);
	void (*tick)(struct task_struct *p);
	__s32 (*init)(void);
	void (*exit)(struct scx_exit_info *info);
	char name[128];
};

/* include/linux/sched/ext.h and kernel/sched/ext_internal.h of 7.3. */
#define SCX_DSQ_FLAG_BUILTIN (1ULL << 63)
#define SCX_DSQ_LOCAL (SCX_DSQ_FLAG_BUILTIN | 2)
#define SCX_DSQ_LOCAL_ON (SCX_DSQ_FLAG_BUILTIN | (1ULL << 62))
#define SCX_SLICE_DFL (20ULL * 1000 * 1000)
#define SCX_KICK_IDLE 1ULL
/* How long a task queued to its preferred LLC waits there before a CPU of
 * another LLC may take it: one default slice, the time a task already
 * waits behind one that runs its slice out (docs/INTEGRATION.md,
 * "schedcache-scx"). */
#define STEAL_AFTER_NS SCX_SLICE_DFL
#define NUMA_NO_NODE (-1)

extern __s32 scx_bpf_create_dsq(__u64 dsq_id, __s32 node) __ksym;
extern void scx_bpf_dsq_insert(struct task_struct *p, __u64 dsq_id, __u64 slice,
			       __u64 enq_flags) __ksym;
extern bool scx_bpf_dsq_move_to_local(__u64 dsq_id) __ksym;
extern struct task_struct *scx_bpf_dsq_peek(__u64 dsq_id) __ksym;
extern __s32 scx_bpf_dsq_nr_queued(__u64 dsq_id) __ksym;
extern void scx_bpf_kick_cpu(__s32 cpu, __u64 flags) __ksym;
extern bool scx_bpf_test_and_clear_cpu_idle(__s32 cpu) __ksym;
extern __s32 scx_bpf_pick_idle_cpu(const struct cpumask *cpus_allowed, __u64 flags) __ksym;
extern __s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
extern bool bpf_cpumask_test_cpu(__u32 cpu, const struct cpumask *cpumask) __ksym;

/* Filled by the loader before load from the llcs map; frozen afterwards,
 * so the verifier sees the bounds of every loop as constants. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 nr_online_cpus = 1;
const volatile __u32 nr_llcs = 1;
const volatile __s32 cpu_llc[SCHEDCACHE_SCX_MAX_CPUS];

/* Each LLC's CPU count, counted by init from cpu_llc. */
__u32 llc_nr_cpus[SCHEDCACHE_SCX_MAX_CPUS];

/* Why the kernel unregistered the scheduler, for the loader. */
struct schedcache_scx_exit exit_info;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCHEDCACHE_SCX_NR_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The seq of the preference each process was last placed by: a placement
 * by another seq is that preference's first. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} placed_seq SEC(".maps");

/* When each task was last queued to its preferred LLC's DSQ (ktime ns);
 * 0 when it was last queued without a preference. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} queued_at SEC(".maps");

/* First placements (struct schedcache_scx_latency), 32 bytes each. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} latencies SEC(".maps");

static __always_inline void count(__u32 counter)
{
	__u64 *value = bpf_map_lookup_elem(&counters, &counter);

	if (value)
		*value += 1;
}

/* llc_of: the LLC of `cpu`; 0 for a CPU beyond the table, which the
 * loader's check of the machine makes unreachable. */
static __always_inline __s32 llc_of(__s32 cpu)
{
	__u32 index = (__u32)cpu;

	barrier_var(index);
	if (index >= SCHEDCACHE_SCX_MAX_CPUS)
		return 0;
	return cpu_llc[index];
}

/* allowed_cpus: `p`'s affinity, typed for the kfuncs. */
static __always_inline const struct cpumask *allowed_cpus(const struct task_struct *p)
{
	return (const struct cpumask *)p->cpus_ptr;
}

/* claim_idle_in_llc: an idle CPU of `llc` in `allowed` (a task's
 * cpus_ptr), `first` tried first, marked busy as it is taken (so two
 * wakers never take the same CPU); -1 when there is none. */
static __attribute__((noinline)) __s32 claim_idle_in_llc(const struct cpumask *allowed,
							 __s32 llc, __s32 first)
{
	__u32 cpu;

	if (first >= 0 && llc_of(first) == llc &&
	    bpf_cpumask_test_cpu(first, allowed) &&
	    scx_bpf_test_and_clear_cpu_idle(first))
		return first;
	for (cpu = 0; cpu < SCHEDCACHE_SCX_MAX_CPUS; cpu++) {
		if (cpu >= nr_cpus)
			break;
		if (cpu_llc[cpu] != llc || (__s32)cpu == first)
			continue;
		if (bpf_cpumask_test_cpu(cpu, allowed) &&
		    scx_bpf_test_and_clear_cpu_idle(cpu))
			return cpu;
	}
	return -1;
}

/* preferred_llc: the usable preferred LLC of `p`'s process, or NO_PREF.
 * A task that may not run on every online CPU is placed as one without
 * (NARROW): its affinity may leave none of the preferred LLC's CPUs, and a
 * task queued where no CPU may take it would wait for a steal. */
#define NO_PREF (-1)
#define NARROW (-2)
#define OVER_AGGREGATED (-3)
static __always_inline __s32 preferred_llc(struct task_struct *p)
{
	const struct schedcache_llc *entry;
	__s32 pref_cpu;
	__s32 llc = schedcache_preferred_llc(&prefs, &llcs, p->tgid, &entry, &pref_cpu);

	if (llc < 0 || (__u32)llc >= nr_llcs)
		return NO_PREF;
	if ((__u32)p->nr_cpus_allowed < nr_online_cpus)
		return NARROW;
	return llc;
}

/* fallback_of: the counter of a placement without a preference. */
static __always_inline __u32 fallback_of(__s32 pref)
{
	if (pref == NARROW)
		return SCHEDCACHE_SCX_NARROW_AFFINITY;
	if (pref == OVER_AGGREGATED)
		return SCHEDCACHE_SCX_OVER_AGGREGATED;
	return SCHEDCACHE_SCX_NO_PREFERENCE;
}

/* note_placement: a task of `tgid` was placed by its preference for
 * `llc` (on a CPU or in the LLC's queue); the first such placement per
 * prefs seq goes to the loader. The entry is read again for its seq:
 * should the mirror have replaced it in between, the record names the
 * newer seq, placed a moment early. Two CPUs may both send a first
 * placement; the loader keeps the earlier. */
static __always_inline void note_placement(__u32 tgid, __s32 llc)
{
	__u32 key = tgid;
	const struct schedcache_pref *pref = bpf_map_lookup_elem(&prefs, &key);
	struct schedcache_scx_latency *record;
	__u64 *last;
	__u64 seq, updated_ns;

	if (!pref)
		return;
	seq = pref->seq;
	updated_ns = pref->updated_ns;
	last = bpf_map_lookup_elem(&placed_seq, &key);
	if (last && *last == seq)
		return;
	bpf_map_update_elem(&placed_seq, &key, &seq, BPF_ANY);
	record = bpf_ringbuf_reserve(&latencies, sizeof(*record), 0);
	if (!record) {
		count(SCHEDCACHE_SCX_LATENCY_LOST);
		return;
	}
	record->tgid = tgid;
	record->llc = llc;
	record->seq = seq;
	record->updated_ns = updated_ns;
	record->placed_ns = bpf_ktime_get_ns();
	/* The loader polls; waking it from inside the scheduler is not
	 * needed. */
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
}

SEC("struct_ops/schedcache_select_cpu")
__s32 BPF_PROG(schedcache_select_cpu, struct task_struct *p, __s32 prev_cpu, __u64 wake_flags)
{
	__s32 pref = preferred_llc(p);
	__s32 cpu;

	if (pref >= 0) {
		cpu = claim_idle_in_llc(allowed_cpus(p), pref, prev_cpu);
		if (cpu < 0)
			return prev_cpu; /* enqueue queues it to its LLC */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
		count(SCHEDCACHE_SCX_PLACED_PREFERRED);
		note_placement(p->tgid, pref);
		return cpu;
	}
	cpu = claim_idle_in_llc(allowed_cpus(p), llc_of(prev_cpu), prev_cpu);
	if (cpu < 0)
		cpu = scx_bpf_pick_idle_cpu(allowed_cpus(p), 0);
	if (cpu < 0)
		return prev_cpu;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
	count(fallback_of(pref));
	return cpu;
}

/* over_aggregated: whether `llc`'s queue already holds as many tasks as
 * the LLC has CPUs, so that a task queued there would wait behind a
 * whole round of them: the preference then yields to the load, as the
 * fair class's cache-aware balancing declines to pile a process onto a
 * busy LLC (docs/INTEGRATION.md, "schedcache-scx"). */
static __always_inline bool over_aggregated(__s32 llc)
{
	__u32 index = (__u32)llc;

	barrier_var(index);
	if (index >= SCHEDCACHE_SCX_MAX_CPUS)
		return false;
	return (__u32)scx_bpf_dsq_nr_queued((__u64)llc) >= llc_nr_cpus[index];
}

/* kick_idle_for: wakes an idle CPU `p` may run on, which will take it. */
static __always_inline void kick_idle_for(struct task_struct *p)
{
	__s32 cpu = scx_bpf_pick_idle_cpu(allowed_cpus(p), 0);

	if (cpu >= 0)
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
}

/* may_steal: whether a CPU of another LLC may take `p`, the head of an
 * LLC's DSQ: a task queued there by its preference only once it has
 * waited STEAL_AFTER_NS, any other at once. */
static __always_inline bool may_steal(struct task_struct *p)
{
	__u64 *stamp = bpf_task_storage_get(&queued_at, p, 0, 0);

	return !stamp || *stamp == 0 || bpf_ktime_get_ns() - *stamp >= STEAL_AFTER_NS;
}

/* enqueue: a task select_cpu did not place (no idle CPU then, or a task
 * that did not wake: preempted, out of slice, new). It gets an idle CPU of
 * its LLC if one has come free, or else that LLC's queue. A task without a
 * preference also gets an idle CPU elsewhere kicked, which will steal it;
 * one with a preference waits for its LLC's CPUs up to STEAL_AFTER_NS. */
SEC("struct_ops/schedcache_enqueue")
void BPF_PROG(schedcache_enqueue, struct task_struct *p, __u64 enq_flags)
{
	__s32 pref, llc, cpu;
	__u64 *stamp;

	if (p->nr_cpus_allowed == 1) {
		/* No other CPU may take it: only its own CPU's queue will do. */
		cpu = scx_bpf_task_cpu(p);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | (__u32)cpu, SCX_SLICE_DFL, enq_flags);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		count(SCHEDCACHE_SCX_PINNED);
		return;
	}
	pref = preferred_llc(p);
	llc = pref >= 0 ? pref : llc_of(scx_bpf_task_cpu(p));
	cpu = claim_idle_in_llc(allowed_cpus(p), llc, scx_bpf_task_cpu(p));
	if (cpu < 0 && pref >= 0 && over_aggregated(pref)) {
		/* Placed as a task without a preference, by its CPU's LLC. */
		pref = OVER_AGGREGATED;
		llc = llc_of(scx_bpf_task_cpu(p));
		cpu = claim_idle_in_llc(allowed_cpus(p), llc, scx_bpf_task_cpu(p));
		if (cpu < 0)
			cpu = scx_bpf_pick_idle_cpu(allowed_cpus(p), 0);
	}
	if (pref >= 0)
		note_placement(p->tgid, pref);
	if (cpu >= 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | (__u32)cpu, SCX_SLICE_DFL, enq_flags);
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		count(pref >= 0 ? SCHEDCACHE_SCX_PLACED_PREFERRED : fallback_of(pref));
		return;
	}
	count(pref >= 0 ? SCHEDCACHE_SCX_QUEUED_PREFERRED_BUSY : fallback_of(pref));
	stamp = bpf_task_storage_get(&queued_at, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (stamp)
		*stamp = pref >= 0 ? bpf_ktime_get_ns() : 0;
	scx_bpf_dsq_insert(p, (__u64)llc, SCX_SLICE_DFL, enq_flags);
	/* A task with a preference is left to its LLC's CPUs until it has
	 * waited the bound (schedcache_tick). */
	if (pref < 0)
		kick_idle_for(p);
}

SEC("struct_ops/schedcache_dispatch")
void BPF_PROG(schedcache_dispatch, __s32 cpu, struct task_struct *prev)
{
	__s32 own = llc_of(cpu);
	__u32 step;

	if (scx_bpf_dsq_move_to_local((__u64)own))
		return;
	for (step = 1; step < SCHEDCACHE_SCX_MAX_CPUS; step++) {
		__u64 other;
		struct task_struct *head;

		if (step >= nr_llcs)
			break;
		other = ((__u32)own + step) % nr_llcs;
		head = scx_bpf_dsq_peek(other);
		/* The head may leave between the peek and the move, and the
		 * move then takes the next task, unchecked: a race of one
		 * task, not worth a lock. */
		if (!head || !may_steal(head))
			continue;
		if (scx_bpf_dsq_move_to_local(other)) {
			count(SCHEDCACHE_SCX_STEALS);
			return;
		}
	}
}

/* tick: a busy CPU whose LLC's queue holds a task that has waited the
 * bound at its head wakes an idle CPU elsewhere to steal it. */
SEC("struct_ops/schedcache_tick")
void BPF_PROG(schedcache_tick, struct task_struct *curr)
{
	struct task_struct *head = scx_bpf_dsq_peek((__u64)llc_of(bpf_get_smp_processor_id()));

	if (head && may_steal(head))
		kick_idle_for(head);
}

/* init creates the DSQs; scx_bpf_create_dsq may sleep, so the loader
 * loads this program sleepable (libbpf 1.1 knows no struct_ops.s). */
SEC("struct_ops/schedcache_init")
__s32 BPF_PROG(schedcache_init)
{
	__u32 llc;
	__s32 err;

	__u32 cpu;

	for (llc = 0; llc < SCHEDCACHE_SCX_MAX_CPUS; llc++) {
		if (llc >= nr_llcs)
			break;
		err = scx_bpf_create_dsq(llc, NUMA_NO_NODE);
		if (err)
			return err;
	}
	for (cpu = 0; cpu < SCHEDCACHE_SCX_MAX_CPUS; cpu++) {
		if (cpu >= nr_cpus)
			break;
		llc = (__u32)cpu_llc[cpu];
		if (llc < SCHEDCACHE_SCX_MAX_CPUS)
			llc_nr_cpus[llc] += 1;
	}
	return 0;
}

SEC("struct_ops/schedcache_exit")
void BPF_PROG(schedcache_exit, struct scx_exit_info *info)
{
	exit_info.kind = info->kind;
	exit_info.exit_code = info->exit_code;
	bpf_probe_read_kernel_str(exit_info.reason, sizeof(exit_info.reason), info->reason);
	bpf_probe_read_kernel_str(exit_info.msg, sizeof(exit_info.msg), info->msg);
}

SEC(".struct_ops")
struct sched_ext_ops schedcache_ops = {
	.select_cpu = (void *)schedcache_select_cpu,
	.enqueue = (void *)schedcache_enqueue,
	.dispatch = (void *)schedcache_dispatch,
	.tick = (void *)schedcache_tick,
	.init = (void *)schedcache_init,
	.exit = (void *)schedcache_exit,
	.name = SCHEDCACHE_SCX_NAME,
};

char LICENSE[] SEC("license") = "GPL";
