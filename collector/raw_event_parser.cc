#include "collector/raw_event_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "collector/internal/libtracefs.h"
#include "collector/internal/proc_file.h"

namespace schedcache::host {
// One event type: its id (the record's common_type) and the payload size
// that covers every field read, so a short record is rejected before any
// field is read past its end.
struct EventLayout {
  int id = -1;
  int min_size = 0;
};

struct RawEventParser::Fields {
  tep_format_field* common_type = nullptr;
  tep_format_field* common_pid = nullptr;
  EventLayout switch_layout, migrate_layout, fork_layout, exit_layout,
      exec_layout;
  // id -1 when the kernel has no task_newtask (RawEventParser::Load).
  EventLayout new_task_layout;
  tep_format_field* prev_pid = nullptr;
  tep_format_field* prev_state = nullptr;
  tep_format_field* next_pid = nullptr;
  tep_format_field* next_comm = nullptr;
  tep_format_field* migrate_pid = nullptr;
  tep_format_field* orig_cpu = nullptr;
  tep_format_field* dest_cpu = nullptr;
  tep_format_field* parent_pid = nullptr;
  tep_format_field* child_pid = nullptr;
  tep_format_field* exit_pid = nullptr;
  tep_format_field* group_dead = nullptr;
  tep_format_field* exec_filename = nullptr;  // __data_loc char[]
  tep_format_field* exec_pid = nullptr;
  tep_format_field* exec_old_pid = nullptr;
  tep_format_field* new_task_pid = nullptr;
  tep_format_field* new_task_comm = nullptr;
  tep_format_field* new_task_clone_flags = nullptr;
  tep_format_field* new_task_oom_score_adj = nullptr;
};

namespace {

// kEvents are the events whose formats Load reads, by system.
constexpr std::pair<const char*, const char*> kEvents[] = {
    {"sched", "sched_switch"},       {"sched", "sched_migrate_task"},
    {"sched", "sched_process_fork"}, {"sched", "sched_process_exit"},
    {"sched", "sched_process_exec"}, {"task", "task_newtask"}};

// A sub-buffer starts with a u64 timestamp and a local_t commit count
// (events/header_page on a 64-bit kernel); anything shorter is no
// sub-buffer at all.
constexpr std::size_t kSubbufferHeaderBytes = 16;

absl::StatusOr<tep_event*> FindSchedEvent(tep_handle* tep, const char* name) {
  tep_event* event = tep_find_event_by_name(tep, "sched", name);
  if (event == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("event sched/", name, " is not in the tracefs formats"));
  }
  return event;
}

// FindField looks up `name` in `event` and widens `layout` to cover it.
// Numbers must be 1, 2, 4 or 8 bytes (what tep_read_number_field reads);
// `is_comm` fields are char arrays of the kernel's TASK_COMM_LEN.
absl::StatusOr<tep_format_field*> FindField(tep_event* event, const char* name,
                                            EventLayout& layout,
                                            bool is_comm = false) {
  tep_format_field* field = tep_find_field(event, name);
  if (field == nullptr) {
    return absl::NotFoundError(absl::StrCat("event ", event->system, "/",
                                            event->name, " has no field ",
                                            name));
  }
  const bool size_ok = is_comm ? field->size == kTaskCommLength
                               : (field->size == 1 || field->size == 2 ||
                                  field->size == 4 || field->size == 8);
  if (!size_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field ", name, " of ", event->system, "/", event->name, " is ",
        field->size, " bytes, which the parser does not read"));
  }
  layout.min_size = std::max(layout.min_size, field->offset + field->size);
  return field;
}

// ReadDynamicString reads a __data_loc string field of a record of `size`
// bytes (the field holds the string's offset in its low 16 bits and its
// length, NUL included, in the high 16); false when it lies past the record.
bool ReadDynamicString(const tep_format_field* field, const std::uint8_t* data,
                       int size, std::string& out) {
  unsigned long long location = 0;
  tep_read_number_field(const_cast<tep_format_field*>(field), data, &location);
  const std::size_t offset = location & 0xffff;
  std::size_t length = (location >> 16) & 0xffff;
  if (offset + length > static_cast<std::size_t>(size)) return false;
  const char* text = reinterpret_cast<const char*>(data + offset);
  while (length > 0 && text[length - 1] == '\0') --length;
  out.assign(text, length);
  return true;
}

// ReadInt reads a field that Create checked; pid_t and int fields are
// signed 32-bit, so the low bits are sign-extended.
std::int64_t ReadInt(const tep_format_field* field, const std::uint8_t* data) {
  unsigned long long value = 0;
  tep_read_number_field(const_cast<tep_format_field*>(field), data, &value);
  switch (field->size) {
    case 1:
      return static_cast<std::int8_t>(value);
    case 2:
      return static_cast<std::int16_t>(value);
    case 4:
      return static_cast<std::int32_t>(value);
    default:
      return static_cast<std::int64_t>(value);
  }
}

}  // namespace

ParseCounts& ParseCounts::operator+=(const ParseCounts& other) {
  events += other.events;
  unparsed += other.unparsed;
  unknown_type += other.unknown_type;
  bad_subbuffers += other.bad_subbuffers;
  return *this;
}

absl::StatusOr<std::unique_ptr<RawEventParser::Fields>>
RawEventParser::FindFields(tep_handle* tep) {
  auto f = std::make_unique<Fields>();
  ASSIGN_OR_RETURN(tep_event * sched_switch,
                   FindSchedEvent(tep, "sched_switch"));
  ASSIGN_OR_RETURN(tep_event * migrate,
                   FindSchedEvent(tep, "sched_migrate_task"));
  ASSIGN_OR_RETURN(tep_event * fork, FindSchedEvent(tep, "sched_process_fork"));
  ASSIGN_OR_RETURN(tep_event * exit, FindSchedEvent(tep, "sched_process_exit"));
  f->common_type = tep_find_common_field(sched_switch, "common_type");
  if (f->common_type == nullptr) {
    return absl::NotFoundError("sched/sched_switch has no field common_type");
  }
  f->switch_layout.id = sched_switch->id;
  f->migrate_layout.id = migrate->id;
  f->fork_layout.id = fork->id;
  f->exit_layout.id = exit->id;
  ASSIGN_OR_RETURN(f->prev_pid,
                   FindField(sched_switch, "prev_pid", f->switch_layout));
  ASSIGN_OR_RETURN(f->prev_state,
                   FindField(sched_switch, "prev_state", f->switch_layout));
  ASSIGN_OR_RETURN(f->next_pid,
                   FindField(sched_switch, "next_pid", f->switch_layout));
  ASSIGN_OR_RETURN(f->next_comm,
                   FindField(sched_switch, "next_comm", f->switch_layout,
                             /*is_comm=*/true));
  ASSIGN_OR_RETURN(f->migrate_pid,
                   FindField(migrate, "pid", f->migrate_layout));
  ASSIGN_OR_RETURN(f->orig_cpu,
                   FindField(migrate, "orig_cpu", f->migrate_layout));
  ASSIGN_OR_RETURN(f->dest_cpu,
                   FindField(migrate, "dest_cpu", f->migrate_layout));
  ASSIGN_OR_RETURN(f->parent_pid,
                   FindField(fork, "parent_pid", f->fork_layout));
  ASSIGN_OR_RETURN(f->child_pid, FindField(fork, "child_pid", f->fork_layout));
  ASSIGN_OR_RETURN(f->exit_pid, FindField(exit, "pid", f->exit_layout));
  ASSIGN_OR_RETURN(f->group_dead,
                   FindField(exit, "group_dead", f->exit_layout));
  f->common_pid = tep_find_common_field(sched_switch, "common_pid");
  if (f->common_pid == nullptr) {
    return absl::NotFoundError("sched/sched_switch has no field common_pid");
  }
  ASSIGN_OR_RETURN(tep_event * exec, FindSchedEvent(tep, "sched_process_exec"));
  f->exec_layout.id = exec->id;
  ASSIGN_OR_RETURN(f->exec_filename,
                   FindField(exec, "filename", f->exec_layout));
  if ((f->exec_filename->flags & TEP_FIELD_IS_DYNAMIC) == 0) {
    return absl::InvalidArgumentError(
        "field filename of sched/sched_process_exec is not a __data_loc "
        "string, which the parser does not read");
  }
  ASSIGN_OR_RETURN(f->exec_pid, FindField(exec, "pid", f->exec_layout));
  ASSIGN_OR_RETURN(f->exec_old_pid,
                   FindField(exec, "old_pid", f->exec_layout));
  RETURN_IF_ERROR(FindNewTaskFields(tep, *f));
  return f;
}

absl::Status RawEventParser::FindNewTaskFields(tep_handle* tep, Fields& f) {
  tep_event* event = tep_find_event_by_name(tep, "task", "task_newtask");
  if (event == nullptr) return absl::OkStatus();  // has_new_task() says so
  ASSIGN_OR_RETURN(f.new_task_pid,
                   FindField(event, "pid", f.new_task_layout));
  ASSIGN_OR_RETURN(f.new_task_comm, FindField(event, "comm", f.new_task_layout,
                                              /*is_comm=*/true));
  ASSIGN_OR_RETURN(f.new_task_clone_flags,
                   FindField(event, "clone_flags", f.new_task_layout));
  ASSIGN_OR_RETURN(f.new_task_oom_score_adj,
                   FindField(event, "oom_score_adj", f.new_task_layout));
  f.new_task_layout.id = event->id;
  return absl::OkStatus();
}

bool RawEventParser::has_new_task() const {
  return fields_->new_task_layout.id >= 0;
}

absl::StatusOr<RawEventParser::TepPtr> RawEventParser::LoadFormats(
    const std::string& tracing_dir) {
  // Only the ring buffer's header and the events read: libtracefs's
  // tracefs_local_events_system would also parse /proc/kallsyms, the
  // printk formats and saved_cmdlines, none of which raw fields need, and
  // kallsyms alone was most of record's start-up (docs/LIVE.md).
  TepPtr tep(tep_alloc());
  if (tep == nullptr) {
    return absl::ResourceExhaustedError("tep_alloc: cannot allocate a tep");
  }
  const std::string events = absl::StrCat(tracing_dir, "/events");
  absl::StatusOr<std::string> header =
      internal::ReadProcFile(absl::StrCat(events, "/header_page"));
  if (!header.ok() || tep_parse_header_page(tep.get(), header->data(),
                                            header->size(),
                                            sizeof(long)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load the ring buffer's header_page from ", events, ": ",
        header.ok() ? "it does not parse" : header.status().message()));
  }
  for (const auto& [system, event] : kEvents) {
    // A missing event is left out here; FindFields names it if it is needed.
    const absl::StatusOr<std::string> format = internal::ReadProcFile(
        absl::StrCat(events, "/", system, "/", event, "/format"));
    if (!format.ok()) continue;
    // An event whose print fmt libtraceevent cannot read is still added,
    // its fields usable (libtracefs ignores such failures too).
    if (tep_parse_event(tep.get(), format->data(), format->size(), system) !=
            TEP_ERRNO__SUCCESS &&
        tep_find_event_by_name(tep.get(), system, event) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot parse ", events, "/", system, "/", event, "/format"));
    }
  }
  tep_set_long_size(tep.get(), tep_get_header_page_size(tep.get()));
  return tep;
}

absl::StatusOr<std::unique_ptr<RawEventParser>> RawEventParser::Load(
    const std::string& tracing_dir) {
  ASSIGN_OR_RETURN(TepPtr tep, LoadFormats(tracing_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<Fields> fields, FindFields(tep.get()));
  std::unique_ptr<kbuffer, KbufferFree> kbuf(tep_kbuffer(tep.get()));
  if (kbuf == nullptr) {
    return absl::ResourceExhaustedError(
        "tep_kbuffer: cannot allocate a kbuffer");
  }
  return std::unique_ptr<RawEventParser>(
      new RawEventParser(std::move(tep), std::move(kbuf), std::move(fields)));
}

RawEventParser::RawEventParser(TepPtr tep,
                               std::unique_ptr<kbuffer, KbufferFree> kbuf,
                               std::unique_ptr<Fields> fields)
    : tep_(std::move(tep)),
      kbuf_(std::move(kbuf)),
      fields_(std::move(fields)) {}

RawEventParser::~RawEventParser() = default;

void RawEventParser::TepFree::operator()(tep_handle* tep) const {
  tep_free(tep);
}

void RawEventParser::KbufferFree::operator()(kbuffer* kbuf) const {
  kbuffer_free(kbuf);
}

bool RawEventParser::DecodeRecord(const std::uint8_t* data, int size,
                                  RawSchedEvent& event,
                                  bool& unknown_type) const {
  const Fields& f = *fields_;
  unknown_type = false;
  if (size < f.common_type->offset + f.common_type->size) return false;
  const int type = static_cast<int>(ReadInt(f.common_type, data) & 0xffff);
  if (type == f.switch_layout.id) {
    if (size < f.switch_layout.min_size) return false;
    event.kind = SchedEventKind::kSwitch;
    event.prev_pid = static_cast<int>(ReadInt(f.prev_pid, data));
    event.prev_state = ReadInt(f.prev_state, data);
    event.next_pid = static_cast<int>(ReadInt(f.next_pid, data));
    std::memcpy(event.next_comm.data(), data + f.next_comm->offset,
                kTaskCommLength);
    event.next_comm.back() = '\0';
  } else if (type == f.migrate_layout.id) {
    if (size < f.migrate_layout.min_size) return false;
    event.kind = SchedEventKind::kMigrate;
    event.pid = static_cast<int>(ReadInt(f.migrate_pid, data));
    event.orig_cpu = static_cast<int>(ReadInt(f.orig_cpu, data));
    event.dest_cpu = static_cast<int>(ReadInt(f.dest_cpu, data));
  } else if (type == f.fork_layout.id) {
    if (size < f.fork_layout.min_size) return false;
    event.kind = SchedEventKind::kFork;
    event.parent_pid = static_cast<int>(ReadInt(f.parent_pid, data));
    event.child_pid = static_cast<int>(ReadInt(f.child_pid, data));
  } else if (type == f.exit_layout.id) {
    if (size < f.exit_layout.min_size) return false;
    event.kind = SchedEventKind::kExit;
    event.pid = static_cast<int>(ReadInt(f.exit_pid, data));
    event.group_dead = ReadInt(f.group_dead, data) != 0;
  } else if (type == f.new_task_layout.id) {
    if (size < f.new_task_layout.min_size) return false;
    event.kind = SchedEventKind::kNewTask;
    event.parent_pid = static_cast<int>(ReadInt(f.common_pid, data));
    event.child_pid = static_cast<int>(ReadInt(f.new_task_pid, data));
    event.clone_flags =
        static_cast<std::uint64_t>(ReadInt(f.new_task_clone_flags, data));
    std::memcpy(event.child_comm.data(), data + f.new_task_comm->offset,
                kTaskCommLength);
    event.child_comm.back() = '\0';
    event.oom_score_adj =
        static_cast<int>(ReadInt(f.new_task_oom_score_adj, data));
  } else if (type == f.exec_layout.id) {
    if (size < f.exec_layout.min_size) return false;
    event.kind = SchedEventKind::kExec;
    event.pid = static_cast<int>(ReadInt(f.exec_pid, data));
    event.old_pid = static_cast<int>(ReadInt(f.exec_old_pid, data));
    return ReadDynamicString(f.exec_filename, data, size, event.filename);
  } else {
    unknown_type = true;
    return false;
  }
  return true;
}

ParseCounts RawEventParser::ParseSubbuffer(
    absl::Span<const std::uint8_t> subbuffer, int cpu, SchedEventSink& sink) {
  ParseCounts counts;
  // kbuffer trusts the sub-buffer header's commit size: check it against
  // the bytes we hold before walking, so a torn read cannot lead it past
  // the end.
  void* page = const_cast<std::uint8_t*>(subbuffer.data());
  if (subbuffer.size() < kSubbufferHeaderBytes ||
      kbuffer_load_subbuffer(kbuf_.get(), page) < 0 ||
      static_cast<std::size_t>(kbuffer_start_of_data(kbuf_.get())) +
              static_cast<std::size_t>(kbuffer_subbuffer_size(kbuf_.get())) >
          subbuffer.size()) {
    ++counts.bad_subbuffers;
    return counts;
  }
  unsigned long long timestamp = 0;
  for (void* data = kbuffer_read_event(kbuf_.get(), &timestamp);
       data != nullptr; data = kbuffer_next_event(kbuf_.get(), &timestamp)) {
    RawSchedEvent event;
    event.timestamp_ns = timestamp;
    event.cpu = cpu;
    bool unknown_type = false;
    if (DecodeRecord(static_cast<const std::uint8_t*>(data),
                     kbuffer_event_size(kbuf_.get()), event, unknown_type)) {
      sink.OnEvent(event);
      ++counts.events;
    } else if (unknown_type) {
      ++counts.unknown_type;
    } else {
      ++counts.unparsed;
    }
  }
  return counts;
}

}  // namespace schedcache::host
