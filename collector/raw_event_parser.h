// RawEventParser decodes the kernel's raw ring-buffer sub-buffers (what a
// read of per_cpu/cpuN/trace_pipe_raw returns) into RawSchedEvents, with
// libtraceevent's kbuffer walking the records and the field layout taken
// from the tracefs event formats (so a kernel that moves a field still
// parses). Every field is looked up once, at Load, not per record.
//
// Thread contract: thread-compatible; one parser per reading thread.
#ifndef SCHEDCACHE_COLLECTOR_RAW_EVENT_PARSER_H_
#define SCHEDCACHE_COLLECTOR_RAW_EVENT_PARSER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "collector/sched_event.h"

struct kbuffer;
struct tep_format_field;
struct tep_handle;

namespace schedcache::host {

// ParseCounts says what became of the records of the sub-buffers parsed.
struct ParseCounts {
  std::uint64_t events = 0;          // delivered to the sink
  std::uint64_t unparsed = 0;        // records that could not be decoded
  std::uint64_t unknown_type = 0;    // records of an event we did not enable
  std::uint64_t bad_subbuffers = 0;  // sub-buffers kbuffer could not load

  ParseCounts& operator+=(const ParseCounts& other);
};

class RawEventParser {
 public:
  // Load parses the sched and task event formats and the ring buffer's
  // header_page from `tracing_dir`/events (the tracing directory or an
  // instance's; the formats are the kernel's, the same in both) and looks
  // up sched_switch, sched_migrate_task, sched_process_fork,
  // sched_process_exit, sched_process_exec, task_newtask when the kernel
  // has it (has_new_task), and their fields. Returns FailedPrecondition
  // naming the directory when the formats cannot be read, NotFound naming
  // the event or field that is missing, InvalidArgument when a field has a
  // size or form the parser does not read.
  static absl::StatusOr<std::unique_ptr<RawEventParser>> Load(
      const std::string& tracing_dir);
  ~RawEventParser();  // Out of line: Fields is defined in the .cc.
  RawEventParser(const RawEventParser&) = delete;
  RawEventParser& operator=(const RawEventParser&) = delete;

  // has_new_task says whether the kernel's formats have task:task_newtask.
  bool has_new_task() const;

  // ParseSubbuffer decodes one sub-buffer read from CPU `cpu`'s ring buffer
  // and delivers its events to `sink` in order. A record that cannot be
  // decoded is counted and skipped; the rest of the sub-buffer still counts.
  ParseCounts ParseSubbuffer(absl::Span<const std::uint8_t> subbuffer, int cpu,
                             SchedEventSink& sink);

 private:
  struct Fields;
  struct TepFree {
    void operator()(tep_handle* tep) const;
  };
  struct KbufferFree {
    void operator()(kbuffer* kbuf) const;
  };
  using TepPtr = std::unique_ptr<tep_handle, TepFree>;
  RawEventParser(TepPtr tep, std::unique_ptr<kbuffer, KbufferFree> kbuf,
                 std::unique_ptr<Fields> fields);
  static absl::StatusOr<TepPtr> LoadFormats(const std::string& tracing_dir);
  static absl::StatusOr<std::unique_ptr<Fields>> FindFields(tep_handle* tep);
  static absl::Status FindNewTaskFields(tep_handle* tep, Fields& fields);
  // DecodeRecord fills `event` from one record's payload; false when the
  // record is too short for its fields or of an unknown type (then
  // `unknown_type` says which).
  bool DecodeRecord(const std::uint8_t* data, int size, RawSchedEvent& event,
                    bool& unknown_type) const;

  // tep_ holds the formats fields_ points into, so it is declared first
  // and freed last.
  TepPtr tep_;
  std::unique_ptr<kbuffer, KbufferFree> kbuf_;
  std::unique_ptr<Fields> fields_;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_RAW_EVENT_PARSER_H_
