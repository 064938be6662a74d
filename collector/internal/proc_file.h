// ReadProcFile reads a whole /proc file for collector/'s readers of process
// state, telling "the task is gone" apart from real errors.
#ifndef SCHEDCACHE_COLLECTOR_INTERNAL_PROC_FILE_H_
#define SCHEDCACHE_COLLECTOR_INTERNAL_PROC_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace schedcache::host::internal {

// ReadProcFile returns the text of `path`. Returns NotFound naming the path
// when the file is missing or its task is being reaped (ENOENT, ESRCH: the
// task exited before we looked), Unavailable naming it for other errors.
absl::StatusOr<std::string> ReadProcFile(const std::string& path);

}  // namespace schedcache::host::internal

#endif  // SCHEDCACHE_COLLECTOR_INTERNAL_PROC_FILE_H_
