// Tiny trace-cmd files for tests: TinyTraceDat writes a version 6 .dat
// (trace-cmd.dat.v6(5)) of one CPU and one ring-buffer page from event
// formats and records made here, so that what reads .dat files is tested
// without a kernel, root or a copied capture. Little-endian, as an x86
// host writes it.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_TRACE_TESTING_TINY_TRACE_DAT_H_
#define SCHEDCACHE_TRACE_TESTING_TINY_TRACE_DAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace schedcache::test_support {

// Le is `value` as `bytes` little-endian bytes.
std::string Le(uint64_t value, int bytes);

// FormatField is one field line of an event format.
struct FormatField {
  std::string decl;  // e.g. "pid_t pid"
  int offset;
  int size;
};

// EventFormat is an event's format file as tracefs shows it, with the four
// common fields every event has first (8 bytes; common_pid at offset 4).
std::string EventFormat(const std::string& name, int id,
                        const std::vector<FormatField>& fields);

// The three sched events as Linux 6.18 lays them out (the migrate comm is
// a __data_loc string), with IDs of our choosing.
inline constexpr int kSwitchId = 300;
inline constexpr int kMigrateId = 301;
inline constexpr int kExitId = 302;
std::vector<FormatField> SwitchFields();  // prev_comm ... next_pid
std::string SwitchFormat();
std::string MigrateFormat();
std::string ExitFormat();

// CommonFields are a record's first 8 bytes: event `id`, run by `pid`.
std::string CommonFields(int id, int pid);
std::string SwitchRecord(int prev_pid, const std::string& prev_comm,
                         int next_pid, const std::string& next_comm);
std::string MigrateRecord(int task_pid, int pid, const std::string& comm,
                          int orig_cpu, int dest_cpu);
std::string ExitRecord(int pid, const std::string& comm);

class TinyTraceDat {
 public:
  explicit TinyTraceDat(int64_t page_timestamp_ns)
      : page_timestamp_ns_(page_timestamp_ns) {}

  // AddFormat stores `format` (an EventFormat) as an event of `system`.
  void AddFormat(const std::string& system, std::string format);
  // AddRecord appends a record `delta_ns` after the previous one (the
  // first: after the page's timestamp). REQUIRES: payload a multiple of 4
  // bytes, at most 112; 0 <= delta_ns < 2^27; all records fit one page.
  void AddRecord(int64_t delta_ns, const std::string& payload);

  // Bytes is the whole file.
  std::string Bytes() const;

 private:
  int64_t page_timestamp_ns_;
  std::vector<std::pair<std::string, std::string>> formats_;
  std::string events_;
};

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_TRACE_TESTING_TINY_TRACE_DAT_H_
