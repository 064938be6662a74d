#include "trace/testing/tiny_trace_dat.h"

#include "absl/strings/str_cat.h"

namespace schedcache::test_support {
namespace {

// Comm16 is a char[16] comm field.
std::string Comm16(const std::string& comm) {
  std::string out = comm;
  out.resize(16, '\0');
  return out;
}

}  // namespace

std::string Le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>(value >> (8 * i)));
  }
  return out;
}

std::string EventFormat(const std::string& name, int id,
                        const std::vector<FormatField>& fields) {
  const std::vector<FormatField> common = {
      {"unsigned short common_type", 0, 2},
      {"unsigned char common_flags", 2, 1},
      {"unsigned char common_preempt_count", 3, 1},
      {"int common_pid", 4, 4}};
  std::string text =
      absl::StrCat("name: ", name, "\nID: ", id, "\nformat:\n");
  for (const std::vector<FormatField>* list : {&common, &fields}) {
    for (const FormatField& f : *list) {
      absl::StrAppend(&text, "\tfield:", f.decl, ";\toffset:", f.offset,
                      ";\tsize:", f.size, ";\tsigned:0;\n");
    }
    text += "\n";  // tracefs puts a blank line after the common fields too
  }
  return text + "print fmt: \"\"\n";
}

std::vector<FormatField> SwitchFields() {
  return {{"char prev_comm[16]", 8, 16},
          {"pid_t prev_pid", 24, 4},
          {"char next_comm[16]", 28, 16},
          {"pid_t next_pid", 44, 4}};
}

std::string SwitchFormat() {
  return EventFormat("sched_switch", kSwitchId, SwitchFields());
}

std::string MigrateFormat() {
  return EventFormat("sched_migrate_task", kMigrateId,
                     {{"__data_loc char[] comm", 8, 4},
                      {"pid_t pid", 12, 4},
                      {"int prio", 16, 4},
                      {"int orig_cpu", 20, 4},
                      {"int dest_cpu", 24, 4}});
}

std::string ExitFormat() {
  return EventFormat("sched_process_exit", kExitId,
                     {{"char comm[16]", 8, 16}, {"pid_t pid", 24, 4}});
}

std::string CommonFields(int id, int pid) {
  return Le(id, 2) + std::string(2, '\0') + Le(pid, 4);
}

std::string SwitchRecord(int prev_pid, const std::string& prev_comm,
                         int next_pid, const std::string& next_comm) {
  return CommonFields(kSwitchId, prev_pid) + Comm16(prev_comm) +
         Le(prev_pid, 4) + Comm16(next_comm) + Le(next_pid, 4);
}

std::string MigrateRecord(int task_pid, int pid, const std::string& comm,
                          int orig_cpu, int dest_cpu) {
  // The string follows the fixed fields, at offset 28; its __data_loc word
  // holds (length with the NUL) << 16 | offset.
  std::string record = CommonFields(kMigrateId, task_pid) +
                       Le(((comm.size() + 1) << 16) | 28, 4) + Le(pid, 4) +
                       Le(120, 4) + Le(orig_cpu, 4) + Le(dest_cpu, 4) + comm;
  record.resize((record.size() + 4) / 4 * 4, '\0');  // the NUL, then 4-align
  return record;
}

std::string ExitRecord(int pid, const std::string& comm) {
  return CommonFields(kExitId, pid) + Comm16(comm) + Le(pid, 4);
}

void TinyTraceDat::AddFormat(const std::string& system, std::string format) {
  formats_.emplace_back(system, std::move(format));
}

void TinyTraceDat::AddRecord(int64_t delta_ns, const std::string& payload) {
  // The ring buffer's event header: the payload's length in 4-byte words
  // (type_len) in the low 5 bits, the time delta in the other 27.
  events_ += Le((payload.size() / 4) | (static_cast<uint64_t>(delta_ns) << 5),
                4) +
             payload;
}

std::string TinyTraceDat::Bytes() const {
  constexpr int kPage = 4096;
  // The kernel's events/header_page and events/header_event, which say how
  // a ring-buffer page and an event header are laid out.
  const std::string header_page =
      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
      "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
  const std::string header_event =
      "# compressed entry header\n\ttype_len    :    5 bits\n"
      "\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
      "\tpadding     : type == 29\n\ttime_extend : type == 30\n"
      "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";
  // Magic, version "6", little-endian, 8-byte longs, the page size.
  std::string out = std::string("\x17\x08\x44tracing6\0\0\x08", 14) +
                    Le(kPage, 4);
  out += std::string("header_page\0", 12) + Le(header_page.size(), 8) +
         header_page;
  out += std::string("header_event\0", 13) + Le(header_event.size(), 8) +
         header_event;
  out += Le(0, 4);  // no ftrace event formats
  // One system entry per format: simpler, and readers take it.
  out += Le(formats_.size(), 4);
  for (const auto& [system, format] : formats_) {
    out += system + std::string(1, '\0') + Le(1, 4) + Le(format.size(), 8) +
           format;
  }
  out += Le(0, 4) + Le(0, 4) + Le(0, 8);  // kallsyms, printk, cmdlines: empty
  // One CPU, no options, then the CPU's data: offset and size of its page,
  // which starts page-aligned.
  out += Le(1, 4) + std::string("options  \0", 10) + Le(0, 2) +
         std::string("flyrecord\0", 10);
  const size_t data_offset = (out.size() + 16 + kPage - 1) / kPage * kPage;
  out += Le(data_offset, 8) + Le(kPage, 8);
  out.resize(data_offset, '\0');
  // The page: its timestamp, the bytes of events committed, the events.
  std::string page =
      Le(page_timestamp_ns_, 8) + Le(events_.size(), 8) + events_;
  page.resize(kPage, '\0');
  return out + page;
}

}  // namespace schedcache::test_support
