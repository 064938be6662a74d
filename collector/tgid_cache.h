// TgidCache answers "which process (tgid) does thread TID belong to?" for
// the live collector: the scheduler tracepoints name thread ids only, and
// /proc/TID/status (its `Tgid:` line) says the rest. A thread's tgid never
// changes, so one read per thread is enough; Forget drops a thread at its
// sched_process_exit so a recycled tid is read afresh.
//
// Thread contract: thread-compatible (one reader thread owns it).
#ifndef SCHEDCACHE_COLLECTOR_TGID_CACHE_H_
#define SCHEDCACHE_COLLECTOR_TGID_CACHE_H_

#include <cstddef>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache::host {

class TgidCache {
 public:
  // `proc_root` is where procfs is mounted; tests pass a directory of
  // hand-written TID/status files.
  explicit TgidCache(std::string proc_root = "/proc");

  // Tgid returns the tgid of thread `tid`, reading PROC/TID/status once and
  // then from memory. Thread 0 (each CPU's idle task) is its own group and
  // has no /proc entry. Returns NotFound naming the tid when the thread is
  // gone (no such file: it exited before we looked; nothing is cached, so
  // nothing goes stale), and InvalidArgument naming the file when the file
  // has no `Tgid:` line with a positive integer.
  absl::StatusOr<int> Tgid(int tid);

  // Forget drops `tid` (call it at the thread's exit; its tid may be reused).
  void Forget(int tid);

  std::size_t size() const { return tgid_by_tid_.size(); }

 private:
  absl::StatusOr<int> ReadTgid(int tid) const;

  std::string proc_root_;
  absl::flat_hash_map<int, int> tgid_by_tid_;
};

// ParseTgidFromStatus finds the `Tgid:` line of a /proc/PID/status text;
// `source` names the file in errors.
absl::StatusOr<int> ParseTgidFromStatus(absl::string_view status_text,
                                        absl::string_view source);

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_TGID_CACHE_H_
