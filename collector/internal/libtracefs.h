// The libtracefs 1.6 and kbuffer functions collector/ calls, declared for C++.
//
// Why not include <tracefs.h>: Debian 12's libtracefs 1.6.4 header is C
// only. It has no extern "C", and its inline tracefs_hist_start() passes an
// int where an enum is expected, which C++ rejects. kbuffer.h also lacks
// extern "C". So this header declares the subset we use, exactly as
// <tracefs.h> does, and libtracefs_check.c includes both headers in one C
// translation unit, where any difference is a "conflicting types" error.
#ifndef SCHEDCACHE_COLLECTOR_INTERNAL_LIBTRACEFS_H_
#define SCHEDCACHE_COLLECTOR_INTERNAL_LIBTRACEFS_H_

#include <event-parse.h>  // Has its own extern "C".
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <kbuffer.h>

struct tracefs_instance;
struct tracefs_cpu;

const char *tracefs_tracing_dir(void);

struct tracefs_instance *tracefs_instance_create(const char *name);
struct tracefs_instance *tracefs_instance_alloc(const char *tracing_dir,
                                                const char *name);
int tracefs_instance_destroy(struct tracefs_instance *instance);
void tracefs_instance_free(struct tracefs_instance *instance);
const char *tracefs_instance_get_name(struct tracefs_instance *instance);
char *tracefs_instance_get_dir(struct tracefs_instance *instance);
int tracefs_instances_walk(int (*callback)(const char *, void *),
                           void *context);
bool tracefs_dir_exists(struct tracefs_instance *instance, const char *name);

int tracefs_instance_file_write(struct tracefs_instance *instance,
                                const char *file, const char *str);
char *tracefs_instance_file_read(struct tracefs_instance *instance,
                                 const char *file, int *psize);
int tracefs_instance_file_read_number(struct tracefs_instance *instance,
                                      const char *file, long long *res);
int tracefs_instance_file_open(struct tracefs_instance *instance,
                               const char *file, int mode);
ssize_t tracefs_instance_get_buffer_size(struct tracefs_instance *instance,
                                         int cpu);
int tracefs_instance_set_buffer_size(struct tracefs_instance *instance,
                                     size_t size, int cpu);

int tracefs_trace_on(struct tracefs_instance *instance);
int tracefs_trace_off(struct tracefs_instance *instance);
int tracefs_event_enable(struct tracefs_instance *instance, const char *system,
                         const char *event);
int tracefs_event_disable(struct tracefs_instance *instance, const char *system,
                          const char *event);

struct tep_handle *tracefs_local_events_system(const char *tracing_dir,
                                               const char *const *sys_names);

struct tracefs_cpu *tracefs_cpu_alloc_fd(int fd, int subbuf_size,
                                         bool nonblock);
void tracefs_cpu_free_fd(struct tracefs_cpu *tcpu);
int tracefs_cpu_read(struct tracefs_cpu *tcpu, void *buffer, bool nonblock);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SCHEDCACHE_COLLECTOR_INTERNAL_LIBTRACEFS_H_
