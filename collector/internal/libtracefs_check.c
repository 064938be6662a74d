/* Compiles the real <tracefs.h> and our C++ declarations of it together:
 * if libtracefs.h declares any function differently from the installed
 * library's header, this is a "conflicting types" error at build time.
 * It defines nothing. */
#include <tracefs.h>

#include "collector/internal/libtracefs.h"
