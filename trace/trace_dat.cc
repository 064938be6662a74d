#include "trace/trace_dat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "events/sched_state_machine.h"
#include "trace/internal/libtracecmd.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define SCHEDCACHE_TRACE_DAT_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SCHEDCACHE_TRACE_DAT_LSAN 1
#endif
#ifdef SCHEDCACHE_TRACE_DAT_LSAN
#include <sanitizer/lsan_interface.h>
#endif

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

// The text parser reads at most 9 digits of seconds; a record's timestamp
// must fit the same bound, so both readers accept the same times.
constexpr uint64_t kMaxTimestampNs = 1'000'000'000'000'000'000ULL;

struct TracecmdCloser {
  void operator()(tracecmd_input* handle) const { tracecmd_close(handle); }
};
using TracecmdHandle = std::unique_ptr<tracecmd_input, TracecmdCloser>;

// OpenTracecmd opens `path` without libtraceevent's print plugins (replay
// reads fields, never printed text). libtracecmd parses every event format
// stored in the file here, and Debian 12's libtraceevent 1.7.1 leaks a
// string parsing an empty __print_symbolic() list, which this kernel's
// kvm:kvm_inj_exception format has: what it allocates in this one call is
// kept out of LeakSanitizer's report, nothing else.
TracecmdHandle OpenTracecmd(const std::string& path) {
#ifdef SCHEDCACHE_TRACE_DAT_LSAN
  __lsan::ScopedDisabler library_leaks_are_not_ours;
#endif
  return TracecmdHandle(
      tracecmd_open(path.c_str(), SCHEDCACHE_TRACECMD_FL_LOAD_NO_PLUGINS));
}

// FieldRef is where one field of an event's records is.
struct FieldRef {
  int offset = 0;
  int size = 0;
  bool dynamic = false;   // __data_loc: the field holds (length << 16 | offset)
  bool relative = false;  // __rel_loc: that offset counts from the field's end
};

// EventFields are the fields replay reads of one event; id -1: the file has
// no format of it.
struct EventFields {
  int id = -1;
  FieldRef comm;  // sched_switch: prev_comm
  FieldRef pid;   // sched_switch: prev_pid
  FieldRef next_comm, next_pid;  // sched_switch
  // sched_switch; size 0: the format has none, so replay cannot tell a
  // runnable switch-out.
  FieldRef prev_state;
  FieldRef orig_cpu, dest_cpu;   // sched_migrate_task
};

struct SchedFormats {
  EventFields sched_switch, migrate, exit;
};

absl::StatusOr<FieldRef> FindField(tep_event* event, const char* name,
                                   bool is_string) {
  const tep_format_field* field = tep_find_field(event, name);
  if (field == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", event->name, " format has no field '", name, "'"));
  }
  FieldRef ref{field->offset, field->size,
               (field->flags & TEP_FIELD_IS_DYNAMIC) != 0,
               (field->flags & TEP_FIELD_IS_RELATIVE) != 0};
  // Numbers and __data_loc words are 4 bytes; a fixed comm is char[N].
  const bool readable =
      is_string ? (ref.dynamic ? ref.size == 4 : ref.size > 0)
                : (!ref.dynamic && ref.size == 4);
  if (!readable || ref.offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", event->name, " field '", name, "' has size ", field->size,
        " at offset ", field->offset, ", which replay does not read"));
  }
  return ref;
}

// FindPrevState looks up sched_switch's prev_state, a long (8 bytes; 4 on
// a 32-bit kernel); size 0 when the format has none.
absl::StatusOr<FieldRef> FindPrevState(tep_event* event) {
  const tep_format_field* field = tep_find_field(event, "prev_state");
  if (field == nullptr) return FieldRef{};
  if ((field->flags & TEP_FIELD_IS_DYNAMIC) != 0 || field->offset < 0 ||
      (field->size != 4 && field->size != 8)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the sched_switch field 'prev_state' has size ", field->size,
        " at offset ", field->offset, ", which replay does not read"));
  }
  return FieldRef{field->offset, field->size};
}

// FindEvent looks up sched:`name` and its fields; id stays -1 when the file
// has no format of it.
absl::StatusOr<EventFields> FindEvent(tep_handle* tep, const char* name) {
  EventFields fields;
  tep_event* event = tep_find_event_by_name(tep, "sched", name);
  if (event == nullptr) return fields;
  fields.id = event->id;
  const bool is_switch = std::strcmp(name, "sched_switch") == 0;
  ASSIGN_OR_RETURN(fields.comm,
                   FindField(event, is_switch ? "prev_comm" : "comm", true));
  ASSIGN_OR_RETURN(fields.pid,
                   FindField(event, is_switch ? "prev_pid" : "pid", false));
  if (is_switch) {
    ASSIGN_OR_RETURN(fields.next_comm, FindField(event, "next_comm", true));
    ASSIGN_OR_RETURN(fields.next_pid, FindField(event, "next_pid", false));
    ASSIGN_OR_RETURN(fields.prev_state, FindPrevState(event));
  }
  if (std::strcmp(name, "sched_migrate_task") == 0) {
    ASSIGN_OR_RETURN(fields.orig_cpu, FindField(event, "orig_cpu", false));
    ASSIGN_OR_RETURN(fields.dest_cpu, FindField(event, "dest_cpu", false));
  }
  return fields;
}

absl::StatusOr<SchedFormats> FindSchedFormats(tep_handle* tep) {
  SchedFormats formats;
  ASSIGN_OR_RETURN(formats.sched_switch, FindEvent(tep, "sched_switch"));
  ASSIGN_OR_RETURN(formats.migrate, FindEvent(tep, "sched_migrate_task"));
  ASSIGN_OR_RETURN(formats.exit, FindEvent(tep, "sched_process_exit"));
  if (formats.sched_switch.id < 0 && formats.migrate.id < 0 &&
      formats.exit.id < 0) {
    return absl::FailedPreconditionError(
        "it holds no format of sched_switch, sched_migrate_task or "
        "sched_process_exit: it was captured without the sched events "
        "(-e sched:sched_switch ...)");
  }
  return formats;
}

// RecordReader reads the fields of one record, checking every read against
// the record's size: a corrupt file cannot make it read past the record.
class RecordReader {
 public:
  RecordReader(tep_handle* tep, const tep_record& record)
      : tep_(tep),
        data_(static_cast<const char*>(record.data)),
        size_(record.size > 0 ? record.size : 0) {}

  std::optional<int32_t> Int(const FieldRef& field) const {
    const std::optional<int64_t> number = Number(field);
    if (!number) return std::nullopt;
    return static_cast<int32_t>(*number);
  }

  // Number reads a 4- or 8-byte number in the file's byte order.
  std::optional<int64_t> Number(const FieldRef& field) const {
    if (!Fits(field.offset, field.size)) return std::nullopt;
    return static_cast<int64_t>(
        tep_read_number(tep_, data_ + field.offset, field.size));
  }

  // String returns the text up to its first NUL, if any.
  std::optional<std::string_view> String(const FieldRef& field) const {
    int64_t offset = field.offset;
    int64_t size = field.size;
    if (field.dynamic) {
      if (!Fits(offset, 4)) return std::nullopt;
      const uint32_t location =
          static_cast<uint32_t>(tep_read_number(tep_, data_ + offset, 4));
      offset = (location & 0xffff) +
               (field.relative ? field.offset + field.size : 0);
      size = location >> 16;
    }
    if (!Fits(offset, size)) return std::nullopt;
    const char* text = data_ + offset;
    return std::string_view(text, strnlen(text, size));
  }

 private:
  bool Fits(int64_t offset, int64_t size) const {
    return offset >= 0 && size >= 0 && offset + size <= size_;
  }

  tep_handle* tep_;
  const char* data_;
  int64_t size_;
};

// FillFields reads the fields of a switch, migrate or exit record into
// `line`; false when the record is too short for its format.
bool FillFields(const RecordReader& reader, const EventFields& event,
                TraceLine& line) {
  std::optional<std::string_view> comm = reader.String(event.comm);
  std::optional<int32_t> pid = reader.Int(event.pid);
  if (!comm || !pid) return false;
  if (line.kind == Kind::kSwitch) {
    line.prev_comm = *comm;
    line.prev_pid = *pid;
    std::optional<std::string_view> next_comm = reader.String(event.next_comm);
    std::optional<int32_t> next_pid = reader.Int(event.next_pid);
    if (!next_comm || !next_pid) return false;
    line.next_comm = *next_comm;
    line.next_pid = *next_pid;
    if (event.prev_state.size == 0) return true;
    const std::optional<int64_t> prev_state = reader.Number(event.prev_state);
    if (!prev_state) return false;
    line.prev_runnable = PrevStateIsRunnable(*prev_state);
    return true;
  }
  line.comm = *comm;
  line.pid = *pid;
  if (line.kind == Kind::kMigrate) {
    std::optional<int32_t> orig_cpu = reader.Int(event.orig_cpu);
    std::optional<int32_t> dest_cpu = reader.Int(event.dest_cpu);
    if (!orig_cpu || !dest_cpu) return false;
    line.orig_cpu = *orig_cpu;
    line.dest_cpu = *dest_cpu;
  }
  return true;
}

// ToTraceLine makes of a record what ParseTraceLine makes of its line.
TraceLine ToTraceLine(tep_handle* tep, const SchedFormats& formats,
                      tep_record& record) {
  TraceLine line;
  line.cpu = record.cpu;
  if (record.ts >= kMaxTimestampNs) {
    line.kind = Kind::kMalformed;
    line.error = "timestamp is 10^18 ns or more";
    return line;
  }
  line.timestamp_ns = static_cast<int64_t>(record.ts);
  const int type = tep_data_type(tep, &record);
  const EventFields* event = nullptr;
  if (type == formats.sched_switch.id) {
    line.kind = Kind::kSwitch;
    event = &formats.sched_switch;
  } else if (type == formats.migrate.id) {
    line.kind = Kind::kMigrate;
    event = &formats.migrate;
  } else if (type == formats.exit.id) {
    line.kind = Kind::kExit;
    event = &formats.exit;
  } else {
    const tep_event* other = tep_find_event(tep, type);
    const bool sched =
        other != nullptr && std::strcmp(other->system, "sched") == 0;
    line.kind = sched ? Kind::kOtherSched : Kind::kNotScheduler;
  }
  line.task_pid = tep_data_pid(tep, &record);
  if (event != nullptr && !FillFields(RecordReader(tep, record), *event,
                                      line)) {
    TraceLine malformed;
    malformed.kind = Kind::kMalformed;
    malformed.error =
        line.kind == Kind::kSwitch
            ? "sched_switch record is shorter than its format"
            : (line.kind == Kind::kMigrate
                   ? "sched_migrate_task record is shorter than its format"
                   : "sched_process_exit record is shorter than its format");
    malformed.timestamp_ns = line.timestamp_ns;
    malformed.cpu = line.cpu;
    return malformed;
  }
  return line;
}

// Iteration is what the libtracecmd callback needs.
struct Iteration {
  tep_handle* tep;
  const SchedFormats& formats;
  absl::FunctionRef<absl::Status(const TraceLine&)> visit;
  absl::Status status;
  int64_t records = 0;
};

int VisitRecord(tracecmd_input* /*handle*/, tep_record* record, int /*cpu*/,
                void* data) {
  Iteration& iteration = *static_cast<Iteration*>(data);
  ++iteration.records;
  iteration.status = iteration.visit(
      ToTraceLine(iteration.tep, iteration.formats, *record));
  return iteration.status.ok() ? 0 : 1;
}

}  // namespace

bool HasTraceDatMagic(absl::string_view path) {
  if (path == "-") return false;
  const std::string name(path);
  struct stat info;
  if (::stat(name.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    // Not a regular file: what a FIFO gave up here, the text reader would
    // never see.
    return false;
  }
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char head[kTraceDatMagic.size()];
  const ssize_t got = ::pread(fd, head, sizeof(head), 0);
  ::close(fd);
  return got == static_cast<ssize_t>(sizeof(head)) &&
         absl::string_view(head, sizeof(head)) == kTraceDatMagic;
}

absl::Status ReadTraceDat(
    absl::string_view path,
    absl::FunctionRef<absl::Status(const TraceLine&)> visit) {
  const std::string name(path);
  const auto error = [&name](absl::StatusCode code, absl::string_view what) {
    return absl::Status(code,
                        absl::StrCat("trace-cmd file '", name, "': ", what));
  };
  if (!HasTraceDatMagic(path)) {
    return error(absl::StatusCode::kInvalidArgument,
                 "not a trace-cmd file (it does not begin with trace-cmd's "
                 "magic bytes \\x17\\x08\\x44tracing)");
  }
  TracecmdHandle top = OpenTracecmd(name);
  if (top == nullptr) {
    return error(absl::StatusCode::kDataLoss,
                 "libtracecmd cannot read it: truncated or corrupt");
  }
  // Every buffer of the file shares its one set of event formats.
  tep_handle* tep = tracecmd_get_tep(top.get());
  absl::StatusOr<SchedFormats> formats = FindSchedFormats(tep);
  if (!formats.ok()) {
    return error(formats.status().code(), formats.status().message());
  }
  std::vector<TracecmdHandle> instances;
  std::vector<tracecmd_input*> handles = {top.get()};
  for (int i = 0; i < tracecmd_buffer_instances(top.get()); ++i) {
    instances.emplace_back(tracecmd_buffer_instance_handle(top.get(), i));
    if (instances.back() == nullptr) {
      const char* buffer = tracecmd_buffer_instance_name(top.get(), i);
      return error(absl::StatusCode::kDataLoss,
                   absl::StrCat("libtracecmd cannot read its buffer '",
                                buffer != nullptr ? buffer : "?",
                                "': truncated or corrupt"));
    }
    handles.push_back(instances.back().get());
  }
  Iteration iteration{tep, *formats, visit, absl::OkStatus(), 0};
  const int result = tracecmd_iterate_events_multi(
      handles.data(), static_cast<int>(handles.size()), VisitRecord,
      &iteration);
  RETURN_IF_ERROR(iteration.status);
  if (result != 0) {
    return error(absl::StatusCode::kDataLoss,
                 absl::StrCat("libtracecmd failed reading it after ",
                              iteration.records, " records"));
  }
  return absl::OkStatus();
}

}  // namespace schedcache
