/* What the guest workloads share (docs/KERNEL.md, "Workloads"): argument
 * parsing that names the bad argument, a CLOCK_MONOTONIC deadline, and
 * thread start-up. Each workload exits 2 on a usage error and 1 when a
 * system call fails, after one line on stderr. */
#ifndef SCHEDCACHE_TESTS_KERNEL_WORKLOADS_WORKLOAD_H_
#define SCHEDCACHE_TESTS_KERNEL_WORKLOADS_WORKLOAD_H_

#include <pthread.h>

/* workload_usage prints "PROG: MESSAGE \"ARG\"" (without ARG when it is
 * NULL) and the usage line, then exits 2. */
void workload_usage(const char *usage, const char *message, const char *arg)
    __attribute__((noreturn));

/* workload_die prints "PROG: WHAT: strerror(errno)" and exits 1. */
void workload_die(const char *what) __attribute__((noreturn));

/* parse_count returns ARG as an int in [min, max]; else a usage error that
 * names NAME and ARG. */
int parse_count(const char *usage, const char *name, const char *arg, int min,
                int max);

/* parse_seconds returns ARG (decimal seconds, e.g. "0.05") as nanoseconds,
 * in (0, 1 day]; else a usage error naming NAME and ARG. */
long long parse_seconds(const char *usage, const char *name, const char *arg);

/* now_ns is CLOCK_MONOTONIC in nanoseconds. */
long long now_ns(void);

/* start_threads runs BODY(ARG + i * ARG_SIZE) on COUNT new threads, whose
 * ids go to THREADS; exits 1 when one cannot be created. */
void start_threads(pthread_t *threads, int count, void *(*body)(void *),
                   void *arg, unsigned long arg_size);

/* join_threads waits for COUNT threads started by start_threads. */
void join_threads(pthread_t *threads, int count);

/* run_threads_for is the whole main of a `THREADS SECONDS` workload: it
 * parses both arguments (a usage error names the bad one), sets
 * *DEADLINE_NS to now plus SECONDS, runs BODY(NULL) on THREADS threads, the
 * calling one among them, and returns when every one has returned. */
void run_threads_for(const char *usage, int argc, char **argv,
                     void *(*body)(void *), long long *deadline_ns);

#endif /* SCHEDCACHE_TESTS_KERNEL_WORKLOADS_WORKLOAD_H_ */
