// The libtracecmd 1.3 functions trace/ calls, declared for C++.
//
// Why not include <trace-cmd.h>: Debian 12's header includes <tracefs.h>,
// which is C only (its inline tracefs_hist_start() passes an int where an
// enum is expected, which C++ rejects). So this header declares the subset
// we use, exactly as <trace-cmd.h> does, and libtracecmd_check.c includes
// both headers in one C translation unit, where any difference is a
// "conflicting types" error.
#ifndef SCHEDCACHE_TRACE_INTERNAL_LIBTRACECMD_H_
#define SCHEDCACHE_TRACE_INTERNAL_LIBTRACECMD_H_

#include <event-parse.h>  // Has its own extern "C".

#ifdef __cplusplus
extern "C" {
#endif

struct tracecmd_input;

// tracecmd_open's flag TRACECMD_FL_LOAD_NO_PLUGINS (an enumerator in
// <trace-cmd.h>, which cannot be declared twice; libtracecmd_check.c
// asserts the value).
#define SCHEDCACHE_TRACECMD_FL_LOAD_NO_PLUGINS 1

struct tracecmd_input *tracecmd_open(const char *file, int flags);
void tracecmd_close(struct tracecmd_input *handle);
struct tep_handle *tracecmd_get_tep(struct tracecmd_input *handle);
int tracecmd_buffer_instances(struct tracecmd_input *handle);
const char *tracecmd_buffer_instance_name(struct tracecmd_input *handle,
                                          int indx);
struct tracecmd_input *tracecmd_buffer_instance_handle(
    struct tracecmd_input *handle, int indx);
int tracecmd_iterate_events_multi(
    struct tracecmd_input **handles, int nr_handles,
    int (*callback)(struct tracecmd_input *handle, struct tep_record *,
                    int, void *),
    void *callback_data);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // SCHEDCACHE_TRACE_INTERNAL_LIBTRACECMD_H_
