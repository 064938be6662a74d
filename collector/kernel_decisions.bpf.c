/* kernel_decisions.bpf.c: the running kernel's own cache-aware decisions
 * (CONFIG_SCHED_CACHE) for `schedcache record --kernel-decisions`
 * (docs/LIVE.md, Kernel decisions).
 *
 * task_cache_work (kernel/sched/fair.c) is the task work in which a thread
 * of a process may scan the LLCs and move its group's preferred CPU. An
 * fentry program notes the group's next_scan before the call; the fexit
 * program reads the group after it and sends one record per call through a
 * ring buffer. A call that moved next_scan is the one that claimed the
 * scan.
 *
 * The kernel's scans follow its real scheduler ticks (sched_tick queues
 * the work), irregular under an emulator, so an fentry program on
 * sched_tick sends each tick, with the thread it found running, through a
 * second ring buffer: replay ticks the model there (docs/MODEL.md). Each
 * tick carries the running thread's numa_preferred_nid and its group's
 * footprint, the two NUMA attributes the tick's account_mm_sched and the
 * task_cache_work it queues read (exceed_llc_capacity, get_pref_llc,
 * get_scan_cpumasks).
 *
 * The build host's kernel need not have SCHED_CACHE: the few types read
 * here are declared with only the fields used, preserve_access_index, so
 * libbpf relocates every field against the running kernel's BTF (CO-RE).
 * The fields only NUMA balancing brings (numa_preferred_nid, and the
 * group's footprint) are read behind bpf_core_field_exists, so a kernel
 * without them loads the program and its records say "unknown".
 * The clock probe (a syscall program) tells userspace where the kernel's
 * jiffies and epochs stand on the monotonic clock. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "collector/kernel_decisions.h"

struct sched_cache_group {
	unsigned long epoch;
	__u64 nr_running_avg;
	unsigned long next_scan;
	unsigned long footprint;
	int cpu;
} __attribute__((preserve_access_index));

struct task_struct {
	struct sched_cache_group *sched_cache_grp;
	int numa_preferred_nid; /* CONFIG_NUMA_BALANCING only */
} __attribute__((preserve_access_index));

struct rq {
	unsigned long cpu_epoch;
	unsigned long cpu_epoch_next;
} __attribute__((preserve_access_index));

/* jiffies is no BTF variable: an untyped ksym, its address from kallsyms. */
extern const void jiffies __ksym;
/* runqueues is a per-CPU variable the kernel's BTF describes. */
extern struct rq runqueues __ksym;

/* What the fentry program saw, for the fexit program of the same thread
 * (a task work runs to its end before the thread runs another). */
struct entry_state {
	__u64 group;
	__u64 next_scan;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct entry_state);
} entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} decisions SEC(".maps");

/* ~HZ records a second per busy CPU, 48 bytes each. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} ticks SEC(".maps");

/* Records lost because their ring buffer was full, per CPU: key 0 the
 * decisions, key 1 the ticks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 key)
{
	__u64 *count = bpf_map_lookup_elem(&lost, &key);

	if (count)
		*count += 1;
}

static __always_inline struct sched_cache_group *current_group(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, sched_cache_grp);
}

static __always_inline __u64 read_jiffies(void)
{
	__u64 now = 0;

	bpf_probe_read_kernel(&now, sizeof(now), &jiffies);
	return now;
}

SEC("fentry/task_cache_work")
int on_task_cache_work_entry(__u64 *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct sched_cache_group *group = current_group();
	struct entry_state state = {
		.group = (__u64)group,
		.next_scan = group ? BPF_CORE_READ(group, next_scan) : 0,
	};

	bpf_map_update_elem(&entries, &tid, &state, BPF_ANY);
	return 0;
}

SEC("fexit/task_cache_work")
int on_task_cache_work_exit(__u64 *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct sched_cache_group *group = current_group();
	struct entry_state *before = bpf_map_lookup_elem(&entries, &tid);
	struct rq *rq = bpf_this_cpu_ptr(&runqueues);
	struct schedcache_kdec_record *record;

	record = bpf_ringbuf_reserve(&decisions, sizeof(*record), 0);
	if (!record) {
		count_lost(0);
		if (before)
			bpf_map_delete_elem(&entries, &tid);
		return 0;
	}
	record->timestamp_ns = bpf_ktime_get_ns();
	record->jiffies = read_jiffies();
	record->cpu = bpf_get_smp_processor_id();
	record->tgid = pid_tgid >> 32;
	record->tid = tid;
	record->group = (__u64)group;
	record->preferred_cpu = group ? BPF_CORE_READ(group, cpu) : -1;
	record->nr_running_avg = group ? BPF_CORE_READ(group, nr_running_avg) : 0;
	record->footprint = group && bpf_core_field_exists(group->footprint)
				    ? BPF_CORE_READ(group, footprint)
				    : 0;
	record->group_epoch = group ? BPF_CORE_READ(group, epoch) : 0;
	record->next_scan = group ? BPF_CORE_READ(group, next_scan) : 0;
	record->cpu_epoch = BPF_CORE_READ(rq, cpu_epoch);
	record->cpu_epoch_next = BPF_CORE_READ(rq, cpu_epoch_next);
	record->scanned = before && group && before->group == (__u64)group &&
			  before->next_scan != record->next_scan;
	record->pad = 0;
	if (before)
		bpf_map_delete_elem(&entries, &tid);
	bpf_ringbuf_submit(record, 0);
	return 0;
}

/* read_numa_attributes fills the tick's NUMA fields from the running
 * thread, and `known` with those the running kernel has: none for the idle
 * task, no footprint for a thread without a group (a kernel thread). */
static __always_inline void
read_numa_attributes(struct schedcache_ktick_record *record)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct sched_cache_group *group;

	record->known = 0;
	record->numa_preferred_nid = -1;
	record->footprint = 0;
	if (record->tid == 0)
		return;
	if (bpf_core_field_exists(task->numa_preferred_nid)) {
		record->numa_preferred_nid =
			BPF_CORE_READ(task, numa_preferred_nid);
		record->known |= SCHEDCACHE_KTICK_NUMA_NID;
	}
	group = BPF_CORE_READ(task, sched_cache_grp);
	if (group && bpf_core_field_exists(group->footprint)) {
		record->footprint = BPF_CORE_READ(group, footprint);
		record->known |= SCHEDCACHE_KTICK_FOOTPRINT;
	}
}

SEC("fentry/sched_tick")
int on_sched_tick(__u64 *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct schedcache_ktick_record *record;

	record = bpf_ringbuf_reserve(&ticks, sizeof(*record), 0);
	if (!record) {
		count_lost(1);
		return 0;
	}
	record->timestamp_ns = bpf_ktime_get_ns();
	record->jiffies = read_jiffies();
	record->cpu = bpf_get_smp_processor_id();
	record->tgid = pid_tgid >> 32;
	record->tid = (__u32)pid_tgid;
	read_numa_attributes(record);
	record->pad = 0;
	bpf_ringbuf_submit(record, 0);
	return 0;
}

/* The clock probe: userspace runs it until jiffies changes between two
 * runs, which puts the edge of a jiffy on the monotonic clock. */
SEC("syscall")
int kernel_clock_probe(struct schedcache_kclock_ctx *ctx)
{
	struct rq *rq0 = bpf_per_cpu_ptr(&runqueues, 0);

	ctx->now_ns = bpf_ktime_get_ns();
	ctx->jiffies = read_jiffies();
	ctx->cpu_epoch = rq0 ? BPF_CORE_READ(rq0, cpu_epoch) : 0;
	ctx->cpu_epoch_next = rq0 ? BPF_CORE_READ(rq0, cpu_epoch_next) : 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
