/* Compiles the real <trace-cmd.h> and our C++ declarations of it together:
 * if libtracecmd.h declares any function differently from the installed
 * library's header, this is a "conflicting types" error at build time.
 * It defines nothing; it also asserts libtracecmd.h's one flag value. */
#include <trace-cmd.h>

#include "trace/internal/libtracecmd.h"

_Static_assert(SCHEDCACHE_TRACECMD_FL_LOAD_NO_PLUGINS ==
                   TRACECMD_FL_LOAD_NO_PLUGINS,
               "libtracecmd.h's flag value differs from <trace-cmd.h>'s");
