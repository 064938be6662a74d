#include "collector/proc_attributes.h"

#include <dirent.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "collector/internal/proc_file.h"

namespace schedcache::host {
namespace {

// ThreadIds lists the numeric entries of DIR (a /proc/PID/task directory);
// NotFound when the directory is gone.
absl::StatusOr<std::vector<int32_t>> ThreadIds(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> handle(opendir(dir.c_str()), &closedir);
  if (handle == nullptr) {
    return absl::NotFoundError(absl::StrCat(dir, " is gone"));
  }
  std::vector<int32_t> tids;
  while (const dirent* entry = readdir(handle.get())) {
    int32_t tid = 0;
    if (absl::SimpleAtoi(entry->d_name, &tid) && tid > 0) tids.push_back(tid);
  }
  return tids;
}

}  // namespace

absl::StatusOr<int32_t> ParseThreadsLine(absl::string_view status_text,
                                         absl::string_view source) {
  for (absl::string_view line : absl::StrSplit(status_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Threads:")) continue;
    const absl::string_view value = absl::StripAsciiWhitespace(line);
    int32_t threads = 0;
    if (!absl::SimpleAtoi(value, &threads) || threads <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": Threads is not a positive integer: \"", value, "\""));
    }
    return threads;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": no \"Threads:\" line"));
}

absl::StatusOr<ThreadSchedValues> ParseThreadSched(absl::string_view text,
                                                   absl::string_view source) {
  ThreadSchedValues values;
  int line_number = 0;
  for (const absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    const std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(line, absl::MaxSplits(':', 1));
    const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    const absl::string_view value = absl::StripAsciiWhitespace(kv.second);
    const bool is_nid = key == "numa_preferred_nid";
    if (!is_nid && key != "total_numa_faults") continue;
    int64_t number = 0;
    if (!absl::SimpleAtoi(value, &number)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", line_number, ": ", key,
                       " is not an integer: \"", value, "\""));
    }
    if (is_nid) {
      values.numa_preferred_nid = static_cast<int32_t>(number);
    } else {
      values.total_numa_faults = number;
    }
  }
  return values;
}

ProcAttributes::ProcAttributes(int64_t epoch_ns, std::string proc_root)
    : epoch_ns_(epoch_ns), proc_root_(std::move(proc_root)) {}

const ProcessAttributes* ProcAttributes::Lookup(int32_t tgid, int64_t now_ns) {
  if (tgid <= 0 || gone_.contains(tgid)) return nullptr;
  const auto it = processes_.find(tgid);
  if (it != processes_.end() && now_ns - it->second.read_at_ns < epoch_ns_) {
    return &it->second;
  }
  ++reads_;
  absl::StatusOr<ProcessAttributes> read = Read(tgid);
  if (!read.ok()) {
    // Gone, or unreadable: its samples keep their own values. Forgotten so
    // that stale values never outlive the process; a gone one is not read
    // again (its last samples still come) until Forget.
    ++unreadable_;
    if (it != processes_.end()) processes_.erase(it);
    if (absl::IsNotFound(read.status())) gone_.insert(tgid);
    return nullptr;
  }
  read->read_at_ns = now_ns;
  ProcessAttributes& slot = processes_[tgid];
  slot = *std::move(read);
  return &slot;
}

void ProcAttributes::Forget(int32_t tgid) {
  processes_.erase(tgid);
  gone_.erase(tgid);
}

absl::StatusOr<ProcessAttributes> ProcAttributes::Read(int32_t tgid) const {
  const std::string base = absl::StrCat(proc_root_, "/", tgid);
  ProcessAttributes out;
  const std::string status_path = base + "/status";
  ASSIGN_OR_RETURN(const std::string status,
                   internal::ReadProcFile(status_path));
  ASSIGN_OR_RETURN(out.nr_threads, ParseThreadsLine(status, status_path));
  ASSIGN_OR_RETURN(out.comm, internal::ReadProcFile(base + "/comm"));
  out.comm = std::string(absl::StripTrailingAsciiWhitespace(out.comm));
  ASSIGN_OR_RETURN(const std::vector<int32_t> tids, ThreadIds(base + "/task"));
  for (const int32_t tid : tids) {
    const std::string path = absl::StrCat(base, "/task/", tid, "/sched");
    absl::StatusOr<std::string> text = internal::ReadProcFile(path);
    if (absl::IsNotFound(text.status())) continue;  // the thread just exited
    if (!text.ok()) return text.status();
    ASSIGN_OR_RETURN(const ThreadSchedValues values,
                     ParseThreadSched(*text, path));
    out.footprint_pages += values.total_numa_faults;
    out.preferred_node[tid] = values.numa_preferred_nid;
  }
  return out;
}

absl::Status AttributeSink::OnSample(const Sample& sample) {
  const ProcessAttributes* process =
      attributes_.Lookup(sample.tgid, sample.timestamp_ns);
  if (process == nullptr) return next_.OnSample(sample);
  Sample filled = sample;
  filled.nr_threads = process->nr_threads;
  filled.footprint_pages = process->footprint_pages;
  const auto node = process->preferred_node.find(sample.tid);
  if (node != process->preferred_node.end()) filled.numa_node = node->second;
  return next_.OnSample(filled);
}

absl::Status AttributeSink::OnProcessExit(const ProcessExit& exit) {
  const absl::Status forwarded = next_.OnProcessExit(exit);
  attributes_.Forget(exit.tgid);
  return forwarded;
}

absl::Status AttributeSink::OnProcessStart(const ProcessStart& start) {
  const absl::Status forwarded = next_.OnProcessStart(start);
  attributes_.Forget(start.tgid);
  return forwarded;
}

}  // namespace schedcache::host
