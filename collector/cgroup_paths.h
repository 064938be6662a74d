// CgroupPaths reads the cgroup a process is in, from /proc/PID/cgroup, for
// the `# schedcache_cgroup:` lines of `schedcache record --output`
// (docs/LIVE.md, "Cgroup paths"), which `ab --group-by cgroup` groups by.
//
// Which line: the scheduler's. On a host with cgroup v1 controllers (v1 or
// hybrid) the line of the `cpu` controller (`N:cpu,cpuacct:PATH`), the
// hierarchy whose groups the CPU scheduler shares time between; a hybrid
// host's v2 line (`0::PATH`) holds no controller there. Without a `cpu`
// line (a cgroup v2 host: its one line is `0::PATH`) the v2 line. A file
// with neither has no path for schedcache.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_COLLECTOR_CGROUP_PATHS_H_
#define SCHEDCACHE_COLLECTOR_CGROUP_PATHS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache::host {

// ParseCgroupFile returns the path of the scheduler's line (above) of a
// /proc/PID/cgroup text. Returns NotFound naming `source` when the text has
// neither a `cpu` nor a `0::` line, InvalidArgument naming `source` and the
// line when that line has no path (not ID:CONTROLLERS:PATH with PATH
// starting with '/').
absl::StatusOr<std::string> ParseCgroupFile(absl::string_view text,
                                            absl::string_view source);

class CgroupPaths {
 public:
  // `proc_root` is where procfs is mounted; tests pass a directory of
  // hand-written PID/cgroup files.
  explicit CgroupPaths(std::string proc_root = "/proc");

  // Read returns process `tgid`'s cgroup path, reading PROC/TGID/cgroup.
  // Returns NotFound when the process is gone or the file names no path
  // (ParseCgroupFile), and the read's or ParseCgroupFile's other errors;
  // each names the file.
  absl::StatusOr<std::string> Read(int32_t tgid) const;

 private:
  const std::string proc_root_;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_CGROUP_PATHS_H_
